import Foundation
import StaffcastCore

/// Reading request bodies of the HTTP API into validated requests. Pure.
enum HTTPBodies {
    /// `POST /v1/events/{id}/messages`: a JSON object, or the message as plain text with
    /// `message_type`, `priority` and `expires_in_minutes` in the query (so `curl -d "Gates open" …`
    /// works: curl labels that body as a form, but it is the text itself).
    static func sendRequest(eventID: UUID, contentType: String, body: [UInt8],
                            query: [String: String]) throws(StaffcastError) -> SendRequest {
        let isJSON = contentType.lowercased().hasPrefix("application/json")
        // curl -d labels a JSON body as a form: it is JSON when it is an object with a text.
        if isJSON || (ObjectKeys.of(body)?.contains { $0 == "message" || $0 == "template" } ?? false) {
            // The fields are in the body: a query parameter beside it would be ignored.
            try KnownFields.tokenOnlyQuery
                .check(Array(query.keys), in: "A send with a JSON body takes its fields in the body; the query")
            return try WireJSON.decode(SendBody.self, from: body, notAnObject: notAnObject)
                .request(eventID: eventID, who: "The JSON body")
        }
        // ?prority=urgent went out as a normal message: a parameter staffcast does not know is named.
        try plainSendParameters.check(Array(query.keys), in: "The query")
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
        // teams=Security,Medical (team names hold no commas); `teams=` given empty: the whole event.
        return try send.addressed(to: query["teams"].map { $0.split(separator: ",").map(String.init) })
    }

    /// The query parameters of a plain-text send.
    private static let plainSendParameters = KnownFields(["message_type", "priority", "expires_in_minutes", "escalate_after_minutes",
                                                          "template", "send_at", "before_start", "force", "teams", "access_token"],
                                                         noun: "parameter")

    /// `POST /v1/events/{id}/templates`: `TemplateBody`.
    static func templateRequest(eventID: UUID, body: [UInt8]) throws(StaffcastError) -> (name: String, send: SendRequest) {
        try WireJSON.decode(TemplateBody.self, from: body, notAnObject: notAnObject).validated(eventID: eventID)
    }

    /// `PATCH /v1/messages/{id}`: `EditBody`, or the corrected text as a plain body. The query
    /// holds nothing but a token: `?priority=urgent` beside a plain body answered 200 having
    /// changed nothing.
    static func editText(contentType: String, body: [UInt8], query: [String: String]) throws(StaffcastError) -> String {
        try KnownFields.tokenOnlyQuery.check(Array(query.keys), in: "An edit changes only the text; its query")
        let text: String
        if contentType.lowercased().hasPrefix("application/json") || ObjectKeys.of(body) != nil {
            guard let m = try WireJSON.decode(EditBody.self, from: body, notAnObject: notAnObject).message else {
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

    /// `POST /v1/users/{id}/notifications`: `NotificationBody`.
    static func notificationRequest(userID: UUID, body: [UInt8]) throws(StaffcastError) -> NotificationRequest {
        try WireJSON.decode(NotificationBody.self, from: body, notAnObject: notAnObject).request(userID: userID)
    }

    private static let notAnObject = "The body is not a JSON object."

    /// The keys of a body that is a JSON object (a `null` value counts); nil for any other body.
    private struct ObjectKeys: Decodable {
        var keys: [String]
        init(from decoder: Decoder) throws { keys = try WireFields(decoder).keys }
        static func of(_ body: [UInt8]) -> [String]? { (try? JSONDecoder().decode(ObjectKeys.self, from: Data(body)))?.keys }
    }

    /// A whole-number query parameter, or nil when absent.
    static func intParameter(_ query: [String: String], _ name: String, range: ClosedRange<Int64>) throws(StaffcastError) -> Int64? {
        try QueryNumber.read(query, name, range)
    }
}
