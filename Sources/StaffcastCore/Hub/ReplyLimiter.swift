import Foundation

/// Limits how fast one user may reply to messages and answer polls (ops `reply` and `answer`,
/// `POST /v1/messages/{id}/answers`): a token bucket per user, over all of their connections
/// and HTTP calls, since one person may have several open. A human answers a few times a
/// minute; a script flipping a safety check between "I am safe" and "I need help" would
/// otherwise bury real calls for help under notifications and `reply` frames.
///
/// Bounded: past `maxUsers`, the users whose bucket is full again are forgotten (a forgotten
/// user starts full, so nothing is lost), or all when none is. Pure: the caller passes the time
/// (seconds on a monotonic clock) and owns the locking.
public struct ReplyLimiter: Sendable {
    public let burst: Double
    public let perMinute: Double
    public let maxUsers: Int
    private var users: [UUID: (bucket: TokenBucket, lastTake: Double)] = [:]

    public init(burst: Double, perMinute: Double, maxUsers: Int = 100_000) {
        self.burst = burst
        self.perMinute = perMinute
        self.maxUsers = maxUsers
    }

    /// How many users it remembers.
    public var count: Int { users.count }

    /// Nil when `user` may reply or answer once more now (and counts it); else the refusal.
    public mutating func refusal(for user: UUID, now: Double) -> StaffcastError? {
        if users[user] == nil, users.count >= maxUsers {
            let full = burst / (perMinute / 60)
            users = users.filter { now - $0.value.lastTake < full }
            if users.count >= maxUsers { users.removeAll(keepingCapacity: true) }
        }
        var bucket = users[user]?.bucket ?? TokenBucket(perSecond: perMinute / 60, burst: burst, now: now)
        let allowed = bucket.take(now: now)
        users[user] = (bucket, now)
        return allowed ? nil : limitReached
    }

    /// Gives back what `refusal` counted for a reply or answer that was not looked at (the
    /// database was down, the server overloaded): a person who tapped "I need help" during an
    /// outage is not then refused for the limit once it is over.
    public mutating func giveBack(for user: UUID, now: Double) {
        guard var entry = users[user] else { return }
        entry.bucket.giveBack(now: now)
        users[user] = entry
    }

    /// Seconds until an empty bucket holds one reply again (for Retry-After).
    public var retryAfterSeconds: Int { max(1, Int((60 / perMinute).rounded(.up))) }

    /// The refusal: `rate_limited`, naming the limit and its settings.
    public var limitReached: StaffcastError {
        let rate = perMinute == perMinute.rounded() ? "\(Int(perMinute))" : String(format: "%.1f", perMinute)
        return StaffcastError(.rateLimited, "You reached the reply rate limit: a burst of \(Int(burst)) replies and poll answers, then \(rate) a minute (server settings reply_burst and reply_rate_per_minute); this one was not stored. Try again in a moment.")
    }
}
