import Foundation

/// A send waiting for its time (docs/protocol.md), as admins and owners of its event see it.
public struct ScheduledMessage: Sendable, Equatable, Codable {
    public enum Status: String, Sendable, Codable, CaseIterable {
        case pending, sent, cancelled
    }

    @WireUUID public var id: UUID
    @WireUUID public var eventID: UUID
    @WireUUID public var senderID: UUID
    public var message: String
    public var messageType: MessageType
    public var priority: Priority
    @WireNull public var expiresInMinutes: Int?
    @WireDate public var sendAt: Date
    public var status: Status
    /// The message it became, once sent.
    @WireNull public var messageID: UUID?
    /// Sent more than a minute after `sendAt` (every server was down at its time).
    @WireDefault public var late: Bool
    /// Why the scheduler cancelled it, when it did (e.g. the sender's access ended).
    @WireNull public var note: String?
    /// The teams it goes to (empty: the whole event), resolved to people when it is sent.
    @WireDefault public var teams: [String] = []

    enum CodingKeys: String, CodingKey {
        case id, eventID = "event_id", senderID = "sender_id", message, messageType = "message_type", priority
        case expiresInMinutes = "expires_in_minutes", sendAt = "send_at", status, messageID = "message_id", late, note, teams
    }

    public init(id: UUID, eventID: UUID, senderID: UUID, message: String, messageType: MessageType, priority: Priority,
                expiresInMinutes: Int?, sendAt: Date, status: Status, messageID: UUID?, late: Bool, note: String? = nil) {
        self.id = id
        self.eventID = eventID
        self.senderID = senderID
        self.message = message
        self.messageType = messageType
        self.priority = priority
        self.expiresInMinutes = expiresInMinutes
        self.sendAt = sendAt
        self.status = status
        self.messageID = messageID
        self.late = late
        self.note = note
    }
}
