import Foundation

/// A staff member's answer to a message (docs/protocol.md).
public struct Reply: Sendable, Equatable {
    public enum Status: String, Sendable, Codable, CaseIterable {
        case onMyWay = "on_my_way", runningLate = "running_late", cannotMakeIt = "cannot_make_it", done, custom

        /// Words for a screen.
        public var label: String {
            switch self {
            case .onMyWay: return "on my way"
            case .runningLate: return "running late"
            case .cannotMakeIt: return "cannot make it"
            case .done: return "done"
            case .custom: return "says"
            }
        }
    }

    public var messageID: UUID
    public var eventID: UUID
    public var userID: UUID
    public var displayName: String
    public var status: Status
    public var text: String?
    public var repliedAt: Date

    public init(messageID: UUID, eventID: UUID, userID: UUID, displayName: String, status: Status, text: String?, repliedAt: Date) {
        self.messageID = messageID
        self.eventID = eventID
        self.userID = userID
        self.displayName = displayName
        self.status = status
        self.text = text
        self.repliedAt = repliedAt
    }
}

extension Reply: Codable {
    enum CodingKeys: String, CodingKey {
        case status, text
        case messageID = "message_id", eventID = "event_id", userID = "user_id", displayName = "display_name"
        case repliedAt = "replied_at"
    }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        messageID = try c.decode(UUID.self, forKey: .messageID)
        eventID = try c.decode(UUID.self, forKey: .eventID)
        userID = try c.decode(UUID.self, forKey: .userID)
        displayName = try c.decode(String.self, forKey: .displayName)
        status = try c.decode(Status.self, forKey: .status)
        text = try c.decodeIfPresent(String.self, forKey: .text)
        repliedAt = try c.decodeRFC3339(forKey: .repliedAt)
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(messageID.uuidString.lowercased(), forKey: .messageID)
        try c.encode(eventID.uuidString.lowercased(), forKey: .eventID)
        try c.encode(userID.uuidString.lowercased(), forKey: .userID)
        try c.encode(displayName, forKey: .displayName)
        try c.encode(status, forKey: .status)
        try c.encode(text, forKey: .text) // null, not absent
        try c.encode(RFC3339.format(repliedAt), forKey: .repliedAt)
    }
}
