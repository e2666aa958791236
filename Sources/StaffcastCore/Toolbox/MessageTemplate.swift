import Foundation

/// A named message of one event, sent with `send` + `template` (docs/protocol.md).
public struct MessageTemplate: Sendable, Equatable, Codable {
    @WireUUID public var eventID: UUID
    public var name: String
    public var message: String
    public var messageType: MessageType
    public var priority: Priority
    @WireNull public var expiresInMinutes: Int?
    @WireDate public var createdAt: Date
    /// The teams a send of it goes to when the send names none (empty: the whole event).
    @WireDefault public var teams: [String] = []

    enum CodingKeys: String, CodingKey {
        case eventID = "event_id", name, message, messageType = "message_type", priority
        case expiresInMinutes = "expires_in_minutes", createdAt = "created_at", teams
    }

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
