import Foundation

/// The `data` of an `escalation` notification to an event's admins and owners (one per round):
/// `{"message_id","round","unread_by":[{"user_id","display_name"}]}`.
public struct EscalationNotice: Sendable, Equatable, Codable {
    @WireUUID public var messageID: UUID
    public var round: Int
    public var unreadBy: [TeamMember]

    public init(messageID: UUID, round: Int, unreadBy: [TeamMember]) {
        self.messageID = messageID
        self.round = round
        self.unreadBy = unreadBy
    }

    enum CodingKeys: String, CodingKey { case round, messageID = "message_id", unreadBy = "unread_by" }

    /// As stored in the notification's jsonb (keys sorted, as the server has always written it).
    public func json() throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: try encoder.encode(self), as: UTF8.self)
    }
}
