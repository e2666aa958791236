import Foundation

/// `GET /v1/events/{id}/messages`: a page of messages, oldest first, and whether more follow
/// (after the page with `since_seq`; before it without). The server writes it, the client and
/// `staffcast history --json` read and write it back.
public struct MessagesPage: Sendable, Equatable, Codable {
    public var messages: [StaffMessage]
    @WireDefault public var more: Bool

    public init(messages: [StaffMessage], more: Bool) {
        self.messages = messages
        self.more = more
    }
}
