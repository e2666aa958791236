import Foundation

/// Someone read a message: the `receipt` frame, for the admins and owners subscribed to its event.
public struct ReadReceipt: Sendable, Equatable, Codable {
    public var messageID: UUID
    public var eventID: UUID
    public var userID: UUID
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

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(messageID.uuidString.lowercased(), forKey: .messageID)
        try c.encode(eventID.uuidString.lowercased(), forKey: .eventID)
        try c.encode(userID.uuidString.lowercased(), forKey: .userID)
        try c.encode(displayName, forKey: .displayName)
        try c.encode(readCount, forKey: .readCount)
    }
}
