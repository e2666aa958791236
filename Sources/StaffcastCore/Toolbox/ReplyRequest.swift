import Foundation

/// A validated `reply` request, however it arrived. Construction is the validation.
public struct ReplyRequest: Sendable, Equatable {
    public static let maxTextBytes = 280

    public var messageID: UUID
    public var status: Reply.Status
    public var text: String?

    /// `text` is required for `custom`, optional otherwise (a note), at most 280 bytes, and
    /// follows `TextRules`.
    public init(messageID: UUID, status: String, text: String?) throws(StaffcastError) {
        guard let s = Reply.Status(rawValue: status) else {
            throw .invalid("status '\(status.prefix(40))' is not one of on_my_way, running_late, cannot_make_it, done, custom.")
        }
        var note = text
        if let t = text {
            if t.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
                note = nil
            } else {
                try TextRules.requireStorable(t, field: "reply text")
                let bytes = t.utf8.count
                guard bytes <= Self.maxTextBytes else {
                    throw StaffcastError(.tooLarge, "The reply text is \(bytes) bytes; the limit is \(Self.maxTextBytes) bytes.")
                }
            }
        }
        if s == .custom && note == nil {
            throw .invalid("A custom reply needs a text (at most \(Self.maxTextBytes) bytes).")
        }
        self.messageID = messageID
        self.status = s
        self.text = note
    }
}
