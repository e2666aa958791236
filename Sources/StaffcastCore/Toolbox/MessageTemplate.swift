import Foundation

/// A named message of one event, sent with `send` + `template` (docs/protocol.md).
public struct MessageTemplate: Sendable, Equatable {
    public var eventID: UUID
    public var name: String
    public var message: String
    public var messageType: MessageType
    public var priority: Priority
    public var expiresInMinutes: Int?
    public var createdAt: Date
    /// The teams a send of it goes to when the send names none (empty: the whole event).
    public var teams: [String] = []

    public init(eventID: UUID, name: String, message: String, messageType: MessageType, priority: Priority,
                expiresInMinutes: Int?, createdAt: Date) {
        self.eventID = eventID
        self.name = name
        self.message = message
        self.messageType = messageType
        self.priority = priority
        self.expiresInMinutes = expiresInMinutes
        self.createdAt = createdAt
    }

    /// 1 to 100 bytes, no control characters and no `/` (it names the template in a URL path).
    public static func validateName(_ name: String) throws(StaffcastError) {
        let trimmed = name.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty, trimmed == name else {
            throw .invalid("A template name must not be empty or start or end with spaces; got '\(name.prefix(40))'.")
        }
        guard name.utf8.count <= 100 else { throw .invalid("A template name may be at most 100 bytes.") }
        guard !name.contains("/") else { throw .invalid("A template name may not contain '/'.") }
        try TextRules.requireStorable(name, field: "template name")
        guard !name.contains("\n") && !name.contains("\t") && !name.contains("\r") else {
            throw .invalid("A template name is one line.")
        }
    }
}

extension MessageTemplate: Codable {
    enum CodingKeys: String, CodingKey {
        case name, message, priority
        case eventID = "event_id", messageType = "message_type", expiresInMinutes = "expires_in_minutes", createdAt = "created_at", teams
    }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        eventID = try c.decode(UUID.self, forKey: .eventID)
        name = try c.decode(String.self, forKey: .name)
        message = try c.decode(String.self, forKey: .message)
        messageType = try c.decode(MessageType.self, forKey: .messageType)
        priority = try c.decode(Priority.self, forKey: .priority)
        expiresInMinutes = try c.decodeIfPresent(Int.self, forKey: .expiresInMinutes)
        createdAt = try c.decodeRFC3339(forKey: .createdAt)
        teams = try c.decodeIfPresent([String].self, forKey: .teams) ?? []
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(eventID.uuidString.lowercased(), forKey: .eventID)
        try c.encode(name, forKey: .name)
        try c.encode(message, forKey: .message)
        try c.encode(messageType, forKey: .messageType)
        try c.encode(priority, forKey: .priority)
        try c.encode(expiresInMinutes, forKey: .expiresInMinutes)
        try c.encode(RFC3339.format(createdAt), forKey: .createdAt)
        try c.encode(teams, forKey: .teams)
    }
}
