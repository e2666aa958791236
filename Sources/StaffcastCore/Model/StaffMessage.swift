import Foundation

/// One row of `staff_messages` as a given user sees it (`read` is that user's view).
public struct StaffMessage: Sendable, Equatable, Codable {
    @WireUUID public var id: UUID
    public var seq: Int64
    @WireUUID public var eventID: UUID
    @WireUUID public var senderID: UUID
    public var senderName: String
    public var message: String
    public var messageType: MessageType
    public var priority: Priority
    @WireDate public var sentAt: Date
    @WireNull public var expiresAt: Date?
    public var read: Bool
    public var readCount: Int
    /// Non-readers are reminded (and admins told) after this many minutes; nil: never.
    @WireNull public var escalateAfterMinutes: Int?
    /// When the text was last corrected (`edit`); nil when never.
    @WireNull public var editedAt: Date? = nil
    /// The teams and zones it was sent to (docs/protocol.md, Audiences); empty: the whole event.
    @WireDefault public var teams: [String] = []
    /// The question it asks, if any (docs/protocol.md, Polls).
    @WireNull public var poll: Poll? = nil
    /// The receiving user's answer (option index), if they answered.
    @WireNull public var answer: Int? = nil

    // The Message object of docs/protocol.md (`appendJSON` writes the same bytes by hand).
    enum CodingKeys: String, CodingKey {
        case id, seq, eventID = "event_id", senderID = "sender_id", senderName = "sender_name", message
        case messageType = "message_type", priority, sentAt = "sent_at", expiresAt = "expires_at", read
        case readCount = "read_count", escalateAfterMinutes = "escalate_after_minutes", editedAt = "edited_at"
        case teams, poll, answer
    }

    public init(id: UUID, seq: Int64, eventID: UUID, senderID: UUID, senderName: String, message: String,
                messageType: MessageType, priority: Priority, sentAt: Date, expiresAt: Date?,
                read: Bool, readCount: Int, escalateAfterMinutes: Int? = nil) {
        self.id = id
        self.seq = seq
        self.eventID = eventID
        self.senderID = senderID
        self.senderName = senderName
        self.message = message
        self.messageType = messageType
        self.priority = priority
        self.sentAt = sentAt
        self.expiresAt = expiresAt
        self.read = read
        self.readCount = readCount
        self.escalateAfterMinutes = escalateAfterMinutes
    }

    /// Emergency or urgent: the terminal client holds the screen until it is acknowledged.
    public var mustBeAcknowledged: Bool { messageType == .emergency || priority == .urgent }

    /// Expired messages are never delivered, replayed or counted as unread.
    public func isExpired(at now: Date) -> Bool {
        guard let expiresAt else { return false }
        return expiresAt <= now
    }
}
