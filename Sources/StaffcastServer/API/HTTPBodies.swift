import Foundation
import StaffcastCore

/// Reading request bodies of the HTTP API into validated requests. Pure.
enum HTTPBodies {
    /// `POST /v1/events/{id}/messages`: a JSON object, or the message as plain text with
    /// `message_type`, `priority` and `expires_in_minutes` in the query (so `curl -d "Gates open" …`
    /// works: curl labels that body as a form, but it is the text itself).
    static func sendRequest(eventID: UUID, contentType: String, body: [UInt8],
                            query: [String: String]) throws(StaffcastError) -> SendRequest {
        if let object = try jsonObject(body, required: contentType.lowercased().hasPrefix("application/json")),
           contentType.lowercased().hasPrefix("application/json") || object["message"] != nil || object["template"] != nil {
            let fields = JSONFields(object)
            let minutes = try fields.int64("expires_in_minutes", min: Int64.min).map { Int(clamping: $0) }
            let escalate = try fields.int64("escalate_after_minutes", min: Int64.min).map { Int(clamping: $0) }
            var send: SendRequest
            switch (try fields.string("message"), try fields.string("template")) {
            case (let message?, nil):
                send = try SendRequest(eventID: eventID, message: message, messageType: try fields.string("message_type"),
                                       priority: try fields.string("priority"), expiresInMinutes: minutes,
                                       escalateAfterMinutes: escalate)
            case (nil, let name?):
                send = try SendRequest.byTemplate(eventID: eventID, name: name, messageType: try fields.string("message_type"),
                                                  priority: try fields.string("priority"), expiresInMinutes: minutes,
                                                  escalateAfterMinutes: escalate)
            case (.some, .some):
                throw .invalid("The JSON body takes \"message\" or \"template\", not both.")
            case (nil, nil):
                throw .invalid("The JSON body needs a \"message\" field with the text to send (or a \"template\" name).")
            }
            send.schedule = try SendSchedule.from(sendAt: try fields.string("send_at"), beforeStart: try fields.string("before_start"))
            send.force = try fields.bool("force") ?? false
            send.poll = try Poll.fromJSON(object["poll"])
            return try send.withTeams(try fields.strings("teams") ?? [])
        }
        guard let text = String(validating: body, as: UTF8.self) else {
            throw .invalid("The body is not UTF-8 text.")
        }
        var minutes: Int?
        if let raw = query["expires_in_minutes"] {
            guard let m = Int(raw) else { throw .invalid("expires_in_minutes must be a whole number; got '\(raw)'.") }
            minutes = m
        }
        var escalate: Int?
        if let raw = query["escalate_after_minutes"] {
            guard let m = Int(raw) else { throw .invalid("escalate_after_minutes must be a whole number; got '\(raw.prefix(40))'.") }
            escalate = m
        }
        var send: SendRequest
        if let name = query["template"] {
            guard text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
                throw .invalid("Send the template (?template=) or a text body, not both.")
            }
            send = try SendRequest.byTemplate(eventID: eventID, name: name, messageType: query["message_type"],
                                              priority: query["priority"], expiresInMinutes: minutes, escalateAfterMinutes: escalate)
        } else {
            send = try SendRequest(eventID: eventID, message: text, messageType: query["message_type"],
                                   priority: query["priority"], expiresInMinutes: minutes,
                                   escalateAfterMinutes: escalate)
        }
        send.schedule = try SendSchedule.from(sendAt: query["send_at"], beforeStart: query["before_start"])
        switch query["force"] {
        case nil, "", "false", "0": send.force = false
        case "true", "1": send.force = true
        case let other?: throw .invalid("force must be true or false; got '\(other.prefix(20))'.")
        }
        // teams=Security,Medical (team names hold no commas).
        let teams = (query["teams"] ?? "").split(separator: ",").map(String.init)
        return try send.withTeams(teams)
    }

    /// `POST /v1/events/{id}/templates`: `{"name","message","message_type"?,"priority"?,"expires_in_minutes"?}`.
    static func templateRequest(eventID: UUID, body: [UInt8]) throws(StaffcastError) -> (name: String, send: SendRequest) {
        guard let object = try jsonObject(body, required: true) else {
            throw .invalid("Send a JSON object with name and message.")
        }
        let fields = JSONFields(object)
        guard let name = try fields.string("name"), let message = try fields.string("message") else {
            throw .invalid("A template needs the string fields name and message.")
        }
        try MessageTemplate.validateName(name)
        let minutes = try fields.int64("expires_in_minutes", min: Int64.min).map { Int(clamping: $0) }
        let send = try SendRequest(eventID: eventID, message: message, messageType: try fields.string("message_type"),
                                   priority: try fields.string("priority"), expiresInMinutes: minutes)
        return (name, try send.withTeams(try fields.strings("teams") ?? []))
    }

    /// `PATCH /v1/messages/{id}`: `{"message"}`, or the corrected text as a plain body.
    static func editText(contentType: String, body: [UInt8]) throws(StaffcastError) -> String {
        let text: String
        if let object = try jsonObject(body, required: contentType.lowercased().hasPrefix("application/json")) {
            guard let m = try JSONFields(object).string("message") else {
                throw .invalid("The JSON body needs a \"message\" field with the corrected text.")
            }
            text = m
        } else {
            guard let plain = String(validating: body, as: UTF8.self) else { throw .invalid("The body is not UTF-8 text.") }
            text = plain
        }
        try SendRequest.validateText(text)
        return text
    }

    /// `POST /v1/users/{id}/notifications`: `{"type","title","message","data"?}`.
    static func notificationRequest(userID: UUID, body: [UInt8]) throws(StaffcastError) -> NotificationRequest {
        guard let object = try jsonObject(body, required: true) else {
            throw .invalid("Send a JSON object with type, title and message.")
        }
        let fields = JSONFields(object)
        guard let type = try fields.string("type"), let title = try fields.string("title"),
              let message = try fields.string("message") else {
            throw .invalid("A notification needs the string fields type, title and message.")
        }
        var data: JSONValue?
        if let raw = object["data"], !(raw is NSNull) {
            guard JSONSerialization.isValidJSONObject(["d": raw]),
                  let encoded = try? JSONSerialization.data(withJSONObject: raw, options: [.fragmentsAllowed]),
                  let value = try? JSONDecoder().decode(JSONValue.self, from: encoded) else {
                throw .invalid("data must be a JSON object or null.")
            }
            if encoded.count > Limits.maxNotificationDataBytes {
                throw StaffcastError(.tooLarge, "data is \(encoded.count) bytes; the limit is \(Limits.maxNotificationDataBytes).")
            }
            data = value
        }
        return try NotificationRequest(userID: userID, type: type, title: title, message: message, data: data)
    }

    private static func jsonObject(_ body: [UInt8], required: Bool) throws(StaffcastError) -> [String: Any]? {
        let parsed = try? JSONSerialization.jsonObject(with: Data(body), options: [])
        if let object = parsed as? [String: Any] { return object }
        if required { throw .invalid("The body is not a JSON object.") }
        return nil
    }

    /// A whole-number query parameter, or nil when absent.
    static func intParameter(_ query: [String: String], _ name: String, range: ClosedRange<Int64>) throws(StaffcastError) -> Int64? {
        guard let raw = query[name], !raw.isEmpty else { return nil }
        guard let value = Int64(raw), range.contains(value) else {
            throw .invalid("\(name) must be a whole number from \(range.lowerBound) to \(range.upperBound); got '\(raw.prefix(40))'.")
        }
        return value
    }
}
