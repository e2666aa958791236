import Foundation

/// Someone read a message: the `receipt` frame, for the admins and owners subscribed to its event.
public struct ReadReceipt: Sendable, Equatable, Codable {
    @WireUUID public var messageID: UUID
    @WireUUID public var eventID: UUID
    @WireUUID public var userID: UUID
    public var displayName: String
    /// How many have read the message (as of the read, or a little after).
    public var readCount: Int

    public init(messageID: UUID, eventID: UUID, userID: UUID, displayName: String, readCount: Int) {
        self.messageID = messageID
        self.eventID = eventID
        self.userID = userID
        self.displayName = displayName
        self.readCount = readCount
    }

    enum CodingKeys: String, CodingKey {
        case messageID = "message_id", eventID = "event_id", userID = "user_id", displayName = "display_name"
        case readCount = "read_count"
    }
}
