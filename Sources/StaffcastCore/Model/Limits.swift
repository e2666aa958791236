/// The input limits of protocol v1. Changing one changes what clients may send, so they are
/// documented in docs/protocol.md.
public enum Limits {
    /// Largest message text, in UTF-8 bytes.
    public static let maxMessageBytes = 4_096
    /// Largest client WebSocket frame (or HTTP body), in bytes; larger gets `too_large`.
    public static let maxFrameBytes = 65_536
    /// `expires_in_minutes` range: one minute to thirty days.
    public static let expiresInMinutes = 1...43_200
    /// `escalate_after_minutes` range: one minute to a day.
    public static let escalateAfterMinutes = 1...1_440
    /// `history` page size.
    public static let defaultHistoryLimit = 50
    public static let maxHistoryLimit = 200
    /// Messages replayed on a plain subscribe.
    public static let subscribeHistory = 50
    /// Most messages replayed by one `since_seq` catch-up (`subscribed` then says `more`); a
    /// client further behind pages with `history` and `after_seq`.
    public static let maxCatchUp = 1_000
    /// Notification fields.
    public static let maxNotificationTypeBytes = 100
    public static let maxNotificationTitleBytes = 200
    public static let maxNotificationDataBytes = 16_384
}
