/// What a push or email row of the outbox carries about a message already delivered by it
/// (sql/021_corrections.sql): its corrected text, or that it was withdrawn. The raw value is the
/// WebSocket op of the same change, which the push payload and the webhook type use too.
public enum Correction: String, Sendable, CaseIterable {
    case updated = "message_updated"
    case retracted = "message_retracted"
}
