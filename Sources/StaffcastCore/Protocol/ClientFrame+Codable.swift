import Foundation

/// A client frame as JSON (docs/protocol.md): the server decodes it (`ClientFrameDecoder`, whose
/// general path is this `init(from:)`), clients encode it. A frame that is refused throws a
/// `ClientFrameError` with the field named and the `ref` when one was readable.
extension ClientFrame: Codable {
    public init(from decoder: Decoder) throws {
        let f = try WireFields(decoder)
        var ref: String?
        do throws(StaffcastError) {
            ref = try f.string("ref")
            guard let op = try f.string("op") else {
                throw StaffcastError.invalid("The frame has no \"op\" field; say what you want, e.g. {\"op\":\"ping\"}.")
            }
            request = try Self.request(op: op, f)
            self.ref = ref
        } catch {
            throw ClientFrameError(ref: ref, error: error)
        }
    }

    /// A `send` frame's fields: the send's own beside `op`, `ref` and `event_id`.
    static let sendFields = KnownFields(["op", "ref", "event_id"] + SendBody.fields.names)

    private static func request(op: String, _ f: WireFields) throws(StaffcastError) -> ClientRequest {
        switch op {
        case "subscribe":
            return .subscribe(eventID: try f.requiredUUID("event_id"), sinceSeq: try f.int64("since_seq", min: 0))
        case "unsubscribe":
            return .unsubscribe(eventID: try f.requiredUUID("event_id"))
        case "send":
            // A mistyped field ("priorty") is refused by name, as over HTTP, not sent as normal.
            try f.refuseUnknown(Self.sendFields, in: "send")
            let eventID = try f.requiredUUID("event_id")
            return .send(try SendBody(f).request(eventID: eventID, who: "send"))
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
            try f.refuseUnknown(KnownFields(["op", "ref", "message_id", "message"]), in: "edit (it changes only the text)")
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
            guard option <= 5 else { throw .invalid("option \(option) is none of the poll's options (0 is the first; a poll has at most 6, so at most 5).") }
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

    enum Key: String, CodingKey {
        case op, ref, status, text, message, option, limit
        case eventID = "event_id", sinceSeq = "since_seq", messageID = "message_id", throughSeq = "through_seq"
        case notificationID = "notification_id", beforeSeq = "before_seq", afterSeq = "after_seq"
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: Key.self)
        try c.encode(request.op, forKey: .op)
        try c.encodeIfPresent(ref, forKey: .ref)
        func id(_ u: UUID, _ key: Key) throws { try c.encode(u.wireText, forKey: key) }
        switch request {
        case .subscribe(let event, let since):
            try id(event, .eventID)
            try c.encodeIfPresent(since, forKey: .sinceSeq)
        case .unsubscribe(let event):
            try id(event, .eventID)
        case .send(let send):
            try id(send.eventID, .eventID)
            try SendBody(send).encode(to: encoder) // the same object: its fields beside op and event_id
        case .markRead(let message), .retract(let message):
            try id(message, .messageID)
        case .markAllRead(let event, let through):
            try id(event, .eventID)
            try c.encodeIfPresent(through, forKey: .throughSeq)
        case .markNotificationRead(let notification):
            try id(notification, .notificationID)
        case .history(let event, let before, let after, let limit):
            try id(event, .eventID)
            try c.encodeIfPresent(before, forKey: .beforeSeq)
            try c.encodeIfPresent(after, forKey: .afterSeq)
            try c.encode(limit, forKey: .limit)
        case .listEvents, .ping:
            break
        case .edit(let message, let text):
            try id(message, .messageID)
            try c.encode(text, forKey: .message)
        case .reply(let reply):
            try id(reply.messageID, .messageID)
            try c.encode(reply.status, forKey: .status)
            try c.encodeIfPresent(reply.text, forKey: .text)
        case .answer(let message, let option):
            try id(message, .messageID)
            try c.encode(option, forKey: .option)
        }
    }
}

