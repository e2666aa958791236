import Foundation
import StaffcastCore

/// One claimed outbox row (sql/012_reach.sql) with what its delivery needs, read in the claiming
/// transaction. The lease keeps other servers off it while it is delivered.
public struct OutboxItem: Sendable {
    public enum Target: Sendable {
        /// A Web Push of `message` (as its recipient sees it) to one subscription, registered by
        /// `token` (nil: before sql/019): once that token ends, nothing more is sent to it.
        /// With a `correction`, the message was pushed to it before and has changed since.
        case push(subscriptionID: UUID, endpoint: String, p256dh: String, auth: String, token: TokenDigest?, message: StaffMessage,
                  correction: Correction?)
        /// An email of `message` to one person; with a `correction`, a short note that the one
        /// they were emailed before has changed.
        case email(address: String, displayName: String, eventName: String, message: StaffMessage, correction: Correction?)
        /// A webhook POST of `payload` (the exact bytes signed) to `url`.
        case webhook(webhookID: UUID, url: String, secret: String, changeType: String, payload: String)
    }

    public var id: Int64
    public var kind: DeliveryKind
    public var deliveryID: UUID
    /// Attempts so far, this one included.
    public var attempts: Int
    public var giveUpAt: Date
    public var eventID: UUID?
    public var userID: UUID?
    public var messageID: UUID?
    public var target: Target
}
