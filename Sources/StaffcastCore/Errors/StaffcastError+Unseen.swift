import Foundation

/// One answer for "does not exist" and "exists but is not yours to see": an event, user or
/// message the caller cannot see gets exactly the response a nonexistent one gets (same code,
/// same sentence, same HTTP status), so no response tells anyone that something they have no
/// access to exists (docs/security.md). The sentence does not repeat the id, so the two bodies
/// are the same byte for byte. Refusals about things the caller can see (staff
/// sending, staff asking for receipts) stay `forbidden` with their own reason.
extension StaffcastError {
    public static func noSuchEvent(_ id: UUID) -> StaffcastError {
        .notFound("There is no event with that id that you can see.")
    }

    public static func noSuchUser(_ id: UUID) -> StaffcastError {
        .notFound("There is no user with that id whose tokens you may manage.")
    }

    public static func noSuchMessage(_ id: UUID) -> StaffcastError {
        .notFound("There is no message with that id that you can see.")
    }
}
