import StaffcastCore

/// `GET /v1/events/{id}/messages`: a page of messages, oldest first, and whether more follow
/// (after the page with `since_seq`; before it without).
struct MessagesPage: Encodable, Sendable {
    var messages: [StaffMessage]
    var more: Bool
}
