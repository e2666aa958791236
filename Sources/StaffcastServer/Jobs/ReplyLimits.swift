import Foundation
import StaffcastCore
import Synchronization

/// The reply and poll-answer rate limit (`ReplyLimiter`) of this server, one for the WebSocket
/// (`JobRunner`, any service loop) and HTTP (`HTTPAPI`) together, so that a user's
/// connections and calls share one bucket. Any thread; the limiter is behind a lock held only
/// for one lookup.
final class ReplyLimits: Sendable {
    private let limiter: Mutex<ReplyLimiter>
    /// Seconds until a user over the limit may reply once more (HTTP Retry-After).
    let retryAfterSeconds: Int

    init(_ configuration: ServerConfiguration) {
        let policy = ReplyLimiter(burst: configuration.replyBurst, perMinute: configuration.replyRatePerMinute)
        retryAfterSeconds = policy.retryAfterSeconds
        limiter = Mutex(policy)
    }

    /// Nil when `user` may reply or answer now (counted); else the `rate_limited` refusal.
    func refusal(for user: UUID) -> StaffcastError? {
        let now = ServiceLoop.monotonicNow()
        return limiter.withLock { $0.refusal(for: user, now: now) }
    }

    /// Gives back the count of a reply or answer that was never taken in (`ReplyLimiter.giveBack`):
    /// refused with `error` when it `refundsRateLimit`, or always without one (no queue took it).
    func giveBack(for user: UUID, after error: StaffcastError? = nil) {
        guard error?.refundsRateLimit ?? true else { return }
        let now = ServiceLoop.monotonicNow()
        limiter.withLock { $0.giveBack(for: user, now: now) }
    }
}
