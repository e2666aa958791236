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
        try TextRules.requireName(name, of: "template", without: ["/"])
    }
}
