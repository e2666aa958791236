import Foundation

/// Who has read one message and who of the event's roster has not: `GET /v1/messages/{id}/receipts`
/// (docs/protocol.md). The store builds it, the server writes it (`ReceiptsBody`, by hand for
/// speed) and the client reads it back as this type; `read_count` and `totals` are derived.
public struct Receipts: Sendable, Equatable, Decodable {
    public struct Person: Sendable, Equatable, Codable {
        public var userID: UUID
        public var displayName: String
        /// When they read it (people in `readBy` only).
        public var readAt: Date?
        /// Their latest reply to the message (docs/protocol.md), if any.
        public var reply: Reply?
        /// How the message reached them (the delivery funnel), oldest first.
        public var reached: [Reached] = []
        enum CodingKeys: String, CodingKey {
            case userID = "user_id", displayName = "display_name", readAt = "read_at", reply, reached
        }
        public init(userID: UUID, displayName: String, readAt: Date? = nil) {
            self.userID = userID
            self.displayName = displayName
            self.readAt = readAt
        }
        public init(from decoder: Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            userID = try c.decode(UUID.self, forKey: .userID)
            displayName = try c.decode(String.self, forKey: .displayName)
            readAt = try c.decodeIfPresent(String.self, forKey: .readAt).flatMap(RFC3339.parse)
            reply = try c.decodeIfPresent(Reply.self, forKey: .reply)
            reached = try c.decodeIfPresent([Reached].self, forKey: .reached) ?? []
        }
        public func encode(to encoder: Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(userID.wireText, forKey: .userID)
            try c.encode(displayName, forKey: .displayName)
            if let readAt { try c.encode(RFC3339.format(readAt), forKey: .readAt) }
            if let reply { try c.encode(reply, forKey: .reply) }
            try c.encode(reached, forKey: .reached)
        }
    }

    public var messageID: UUID
    public var eventID: UUID
    public var readBy: [Person]
    public var unreadBy: [Person]

    enum CodingKeys: String, CodingKey {
        case messageID = "message_id", eventID = "event_id", readBy = "read_by", unreadBy = "unread_by"
    }

    public init(messageID: UUID, eventID: UUID, readBy: [Person], unreadBy: [Person]) {
        self.messageID = messageID
        self.eventID = eventID
        self.readBy = readBy
        self.unreadBy = unreadBy
    }

    public var readCount: Int { readBy.count }
    /// The delivery funnel's totals: people reached live, by push, by email, and who read it.
    public var totals: FunnelTotals { FunnelTotals(reached: (readBy + unreadBy).map(\.reached), read: readBy.count) }
}
