import Foundation

/// A staff member's answer to a message (docs/protocol.md).
public struct Reply: Sendable, Equatable, Codable {
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

    @WireUUID public var messageID: UUID
    @WireUUID public var eventID: UUID
    @WireUUID public var userID: UUID
    public var displayName: String
    public var status: Status
    @WireNull public var text: String?
    @WireDate public var repliedAt: Date

    enum CodingKeys: String, CodingKey {
        case messageID = "message_id", eventID = "event_id", userID = "user_id", displayName = "display_name"
        case status, text, repliedAt = "replied_at"
    }

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
