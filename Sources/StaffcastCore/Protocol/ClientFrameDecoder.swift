import Foundation

/// Turns the bytes of one client text frame into a `ClientFrame`, or a `ClientFrameError`
/// whose sentence names the field at fault. Pure: no I/O, safe on any thread.
public enum ClientFrameDecoder {
    public static func decode(_ bytes: [UInt8]) -> Result<ClientFrame, ClientFrameError> {
        if bytes.count > Limits.maxFrameBytes {
            return .failure(ClientFrameError(ref: nil, error: StaffcastError(.tooLarge,
                "The frame is \(bytes.count) bytes; the limit is \(Limits.maxFrameBytes) bytes.")))
        }
        if let frame = decodePlain(bytes) { return .success(frame) }
        return decodeGeneral(bytes)
    }

    /// Any frame, through JSONSerialization.
    static func decodeGeneral(_ bytes: [UInt8]) -> Result<ClientFrame, ClientFrameError> {
        let parsed: Any
        do {
            parsed = try JSONSerialization.jsonObject(with: Data(bytes), options: [])
        } catch {
            return .failure(ClientFrameError(ref: nil, error: .invalid("The frame is not valid JSON; send one JSON object per text frame.")))
        }
        guard let object = parsed as? [String: Any] else {
            return .failure(ClientFrameError(ref: nil, error: .invalid("The frame must be a JSON object with an \"op\" field.")))
        }
        let fields = JSONFields(object)
        var ref: String?
        do throws(StaffcastError) {
            ref = try fields.string("ref")
            guard let op = try fields.string("op") else {
                throw StaffcastError.invalid("The frame has no \"op\" field; say what you want, e.g. {\"op\":\"ping\"}.")
            }
            return .success(ClientFrame(ref: ref, request: try request(op: op, fields)))
        } catch {
            return .failure(ClientFrameError(ref: ref, error: error))
        }
    }

    private static func request(op: String, _ f: JSONFields) throws(StaffcastError) -> ClientRequest {
        switch op {
        case "subscribe":
            return .subscribe(eventID: try f.requiredUUID("event_id"), sinceSeq: try f.int64("since_seq", min: 0))
        case "unsubscribe":
            return .unsubscribe(eventID: try f.requiredUUID("event_id"))
        case "send":
            let eventID = try f.requiredUUID("event_id")
            let minutes = try f.int64("expires_in_minutes", min: Int64.min).map { Int(clamping: $0) }
            let escalate = try f.int64("escalate_after_minutes", min: Int64.min).map { Int(clamping: $0) }
            var send: SendRequest
            switch (try f.string("message"), try f.string("template")) {
            case (let message?, nil):
                send = try SendRequest(eventID: eventID, message: message, messageType: try f.string("message_type"),
                                       priority: try f.string("priority"), expiresInMinutes: minutes,
                                       escalateAfterMinutes: escalate)
            case (nil, let name?):
                send = try SendRequest.byTemplate(eventID: eventID, name: name, messageType: try f.string("message_type"),
                                                  priority: try f.string("priority"), expiresInMinutes: minutes,
                                                  escalateAfterMinutes: escalate)
            case (.some, .some):
                throw .invalid("send takes \"message\" or \"template\", not both.")
            case (nil, nil):
                throw .invalid("send needs a \"message\" field with the text to send (or a \"template\" name).")
            }
            send.schedule = try SendSchedule.from(sendAt: try f.string("send_at"), beforeStart: try f.string("before_start"))
            send.force = try f.bool("force") ?? false
            send = try send.withTeams(try f.strings("teams") ?? [])
            send.poll = try Poll.fromJSON(f.object["poll"])
            return .send(send)
        case "mark_read":
            return .markRead(messageID: try f.requiredUUID("message_id"))
        case "mark_all_read":
            return .markAllRead(eventID: try f.requiredUUID("event_id"), throughSeq: try f.int64("through_seq", min: 0))
        case "mark_notification_read":
            return .markNotificationRead(notificationID: try f.requiredUUID("notification_id"))
        case "history":
            let limit = try f.int64("limit", min: 1) ?? Int64(Limits.defaultHistoryLimit)
            guard limit <= Limits.maxHistoryLimit else {
                throw .invalid("limit may be at most \(Limits.maxHistoryLimit); got \(limit).")
            }
            let before = try f.int64("before_seq", min: 1)
            let after = try f.int64("after_seq", min: 0)
            if before != nil && after != nil {
                throw .invalid("Give before_seq (older messages) or after_seq (newer ones), not both.")
            }
            return .history(eventID: try f.requiredUUID("event_id"), beforeSeq: before, afterSeq: after, limit: Int(limit))
        case "list_events":
            return .listEvents
        case "edit":
            let id = try f.requiredUUID("message_id")
            guard let message = try f.string("message") else {
                throw .invalid("edit needs a \"message\" field with the corrected text.")
            }
            try SendRequest.validateText(message)
            return .edit(messageID: id, message: message)
        case "answer":
            let id = try f.requiredUUID("message_id")
            guard let option = try f.int64("option", min: 0) else {
                throw .invalid("answer needs \"option\": the 0-based index of the chosen option.")
            }
            guard option <= 5 else { throw .invalid("option must be from 0 to 5; got \(option).") }
            return .answer(messageID: id, option: Int(option))
        case "retract":
            return .retract(messageID: try f.requiredUUID("message_id"))
        case "reply":
            let id = try f.requiredUUID("message_id")
            guard let status = try f.string("status") else {
                throw .invalid("reply needs a \"status\": on_my_way, running_late, cannot_make_it, done or custom.")
            }
            return .reply(try ReplyRequest(messageID: id, status: status, text: try f.string("text")))
        case "ping":
            return .ping
        default:
            throw .invalid("Unknown op '\(op)'. Known ops: subscribe, unsubscribe, send, mark_read, mark_all_read, mark_notification_read, history, list_events, ping, edit, retract, reply, answer.")
        }
    }
}
