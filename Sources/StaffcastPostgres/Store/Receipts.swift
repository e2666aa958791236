import Foundation

/// Who has read one message and who of the event's roster has not.
public struct Receipts: Sendable, Equatable {
    public struct Person: Sendable, Equatable, Codable {
        public var userID: UUID
        public var displayName: String
        enum CodingKeys: String, CodingKey { case userID = "user_id", displayName = "display_name" }
        public init(userID: UUID, displayName: String) {
            self.userID = userID
            self.displayName = displayName
        }
        public func encode(to encoder: Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(userID.uuidString.lowercased(), forKey: .userID)
            try c.encode(displayName, forKey: .displayName)
        }
    }

    public var messageID: UUID
    public var eventID: UUID
    public var readBy: [Person]
    public var unreadBy: [Person]
    public var readCount: Int { readBy.count }
}
