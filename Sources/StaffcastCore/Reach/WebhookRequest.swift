import Foundation

/// A webhook as `POST /v1/events/{event_id}/webhooks` takes it: `{"url", "events", "secret"}`.
public struct WebhookRequest: Sendable, Equatable {
    /// The kinds of change a webhook may ask for.
    public static let changeTypes = ["message", "receipt", "reply", "answer", "escalation"]

    public var eventID: UUID
    public var url: String
    public var events: [String]
    public var secret: String

    public init(eventID: UUID, url: String, events: [String], secret: String) throws(StaffcastError) {
        guard url.utf8.count <= 2_048, let u = URL(string: url), let scheme = u.scheme?.lowercased(),
              scheme == "https" || scheme == "http", let host = u.host, !host.isEmpty else {
            throw .invalid("url must be an http or https URL (https outside a trusted network) of at most 2048 bytes.")
        }
        // CR or LF would end the request line; a space or tab is no part of a URL.
        guard TextRules.isSingleToken(url) else {
            throw .invalid("url may not contain spaces, line breaks or other control characters.")
        }
        if let port = u.port, !(1...65_535).contains(port) {
            throw .invalid("url has port \(port): a receiver listens on a port from 1 to 65535.")
        }
        guard !events.isEmpty else {
            throw .invalid("events must name at least one of: \(Self.changeTypes.joined(separator: ", ")).")
        }
        for e in events where !Self.changeTypes.contains(e) {
            throw .invalid("events: '\(e.prefix(40))' is not one of \(Self.changeTypes.joined(separator: ", ")).")
        }
        guard (16...500).contains(secret.utf8.count) else {
            throw .invalid("secret must be 16 to 500 bytes: the receiver checks each body's HMAC-SHA256 with it.")
        }
        guard TextRules.forbiddenControlCharacter(in: secret) == nil, TextRules.forbiddenControlCharacter(in: url) == nil else {
            throw .invalid("url and secret may not contain control characters.")
        }
        self.eventID = eventID
        self.url = url
        self.events = Self.changeTypes.filter(events.contains)
        self.secret = secret
    }

    public static func decode(eventID: UUID, body: [UInt8]) throws(StaffcastError) -> WebhookRequest {
        let b = try WireJSON.decode(Body.self, from: body, notAnObject:
            "The body must be JSON: {\"url\":\"https://…\",\"events\":[\"message\",\"receipt\"],\"secret\":\"…\"}.")
        guard let url = b.url else { throw .invalid("url is missing.") }
        guard let secret = b.secret else { throw .invalid("secret is missing (16 to 500 bytes).") }
        guard let events = b.events else { throw Body.eventsError }
        return try WebhookRequest(eventID: eventID, url: url, events: events, secret: secret)
    }

    /// The body as sent: `{"url", "events", "secret"}`.
    public struct Body: Sendable, Equatable, Codable {
        public var url: String?
        public var secret: String?
        public var events: [String]?

        public init(url: String, events: [String], secret: String) {
            self.url = url
            self.events = events
            self.secret = secret
        }

        static let eventsError = StaffcastError.invalid("events must be an array of: \(changeTypes.joined(separator: ", ")).")

        /// In the order the old checks ran, so the first fault is the one named.
        public init(from decoder: Decoder) throws {
            let f = try WireFields(decoder)
            url = try f.string("url")
            secret = try f.string("secret")
            do { events = try f.strings("events") } catch { throw Self.eventsError }
        }
    }
}
