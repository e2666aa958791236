import Foundation

/// Limits how fast one client address may try invite codes (`POST /v1/invites/{code}/redeem`
/// has no token to limit by): a token bucket per address, `burst` tries at once refilled at
/// `perSecond`. Bounded: past `maxAddresses` the buckets that are full again are forgotten
/// first, then all. Pure: the caller passes the time (seconds on a monotonic clock).
public struct RedeemLimiter: Sendable {
    public let perSecond: Double
    public let burst: Double
    public let maxAddresses: Int
    private var buckets: [String: TokenBucket] = [:]
    private var lastSeen: [String: Double] = [:]

    public init(perSecond: Double = 0.2, burst: Double = 10, maxAddresses: Int = 10_000) {
        self.perSecond = perSecond
        self.burst = burst
        self.maxAddresses = maxAddresses
    }

    /// How many addresses it remembers.
    public var count: Int { buckets.count }

    /// True when `address` may try once more now (and counts the try).
    public mutating func allow(_ address: String, now: Double) -> Bool {
        if buckets[address] == nil, buckets.count >= maxAddresses { forgetRefilled(now: now) }
        var bucket = buckets[address] ?? TokenBucket(perSecond: perSecond, burst: burst, now: now)
        let ok = bucket.take(now: now)
        buckets[address] = bucket
        lastSeen[address] = now
        return ok
    }

    /// Seconds until a bucket that is empty now holds one try again (for Retry-After).
    public var retryAfterSeconds: Int { max(1, Int((1 / perSecond).rounded(.up))) }

    /// Drops addresses whose bucket would be full again by now; if none would, drops all.
    private mutating func forgetRefilled(now: Double) {
        let refill = burst / perSecond
        let stale = lastSeen.filter { now - $0.value >= refill }.map(\.key)
        if stale.isEmpty {
            buckets.removeAll(keepingCapacity: true)
            lastSeen.removeAll(keepingCapacity: true)
        } else {
            for a in stale {
                buckets[a] = nil
                lastSeen[a] = nil
            }
        }
    }
}
