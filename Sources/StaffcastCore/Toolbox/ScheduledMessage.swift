import Foundation

/// A send waiting for its time (docs/protocol.md), as admins and owners of its event see it.
public struct ScheduledMessage: Sendable, Equatable {
    public enum Status: String, Sendable, Codable, CaseIterable {
        case pending, sent, cancelled
    }

    public var id: UUID
    public var eventID: UUID
    public var senderID: UUID
    public var message: String
    public var messageType: MessageType
    public var priority: Priority
    public var expiresInMinutes: Int?
    public var sendAt: Date
    public var status: Status
    /// The message it became, once sent.
    public var messageID: UUID?
    /// Sent more than a minute after `sendAt` (every server was down at its time).
    public var late: Bool
    /// Why the scheduler cancelled it, when it did (e.g. the sender's access ended).
    public var note: String?
    /// The teams it goes to (empty: the whole event), resolved to people when it is sent.
    public var teams: [String] = []

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

extension ScheduledMessage: Codable {
    enum CodingKeys: String, CodingKey {
        case id, message, priority, status, late, note, teams
        case eventID = "event_id", senderID = "sender_id", messageType = "message_type"
        case expiresInMinutes = "expires_in_minutes", sendAt = "send_at", messageID = "message_id"
    }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(UUID.self, forKey: .id)
        eventID = try c.decode(UUID.self, forKey: .eventID)
        senderID = try c.decode(UUID.self, forKey: .senderID)
        message = try c.decode(String.self, forKey: .message)
        messageType = try c.decode(MessageType.self, forKey: .messageType)
        priority = try c.decode(Priority.self, forKey: .priority)
        expiresInMinutes = try c.decodeIfPresent(Int.self, forKey: .expiresInMinutes)
        sendAt = try c.decodeRFC3339(forKey: .sendAt)
        status = try c.decode(Status.self, forKey: .status)
        messageID = try c.decodeIfPresent(UUID.self, forKey: .messageID)
        late = try c.decodeIfPresent(Bool.self, forKey: .late) ?? false
        note = try c.decodeIfPresent(String.self, forKey: .note)
        teams = try c.decodeIfPresent([String].self, forKey: .teams) ?? []
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id.uuidString.lowercased(), forKey: .id)
        try c.encode(eventID.uuidString.lowercased(), forKey: .eventID)
        try c.encode(senderID.uuidString.lowercased(), forKey: .senderID)
        try c.encode(message, forKey: .message)
        try c.encode(messageType, forKey: .messageType)
        try c.encode(priority, forKey: .priority)
        try c.encode(expiresInMinutes, forKey: .expiresInMinutes) // null, not absent
        try c.encode(RFC3339.format(sendAt), forKey: .sendAt)
        try c.encode(status, forKey: .status)
        try c.encode(messageID.map { $0.uuidString.lowercased() }, forKey: .messageID)
        try c.encode(late, forKey: .late)
        try c.encode(note, forKey: .note)
        try c.encode(teams, forKey: .teams)
    }
}
