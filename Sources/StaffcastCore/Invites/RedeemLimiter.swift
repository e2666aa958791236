import Foundation

/// Limits how fast one client address may try wrong invite codes (`POST /v1/invites/{code}/redeem`
/// has no token to limit by): a token bucket per address, `burst` wrong tries at once refilled
/// at `perSecond`. Only failures cost: a try is taken when the request starts (so parallel
/// guesses cannot overshoot) and given back when the code was good, so a crowd joining from one
/// address (venue NAT, a TLS proxy) is never slowed by its own joins. A code known to be live
/// (redeemed here, or created through this server) is let through even when the address has no
/// tries left, so wrong codes from a shared address cannot keep people with a real link out.
/// Bounded: past `maxAddresses` the buckets that are full again are forgotten first, then all;
/// at most `maxLiveCodes` live codes are remembered (the oldest go first). Pure: the caller
/// passes the time (seconds on a monotonic clock).
public struct RedeemLimiter: Sendable {
    /// How one redeem was let in (`admit`), to hand back to `settle`.
    public enum Admission: Sendable, Equatable {
        /// The code is known live: it cost nothing.
        case liveCode
        /// It took one of the address's tries (given back if the code is good).
        case counted
        /// The address has no tries left: answer 429 without looking the code up.
        case refused
    }

    public let perSecond: Double
    public let burst: Double
    public let maxAddresses: Int
    public let maxLiveCodes: Int
    private var buckets: [String: TokenBucket] = [:]
    private var lastSeen: [String: Double] = [:]
    private var live: Set<String> = []
    private var liveOrder: [String] = []

    public init(perSecond: Double = 0.2, burst: Double = 10, maxAddresses: Int = 10_000, maxLiveCodes: Int = 1_000) {
        self.perSecond = perSecond
        self.burst = burst
        self.maxAddresses = maxAddresses
        self.maxLiveCodes = max(1, maxLiveCodes)
    }

    /// How many addresses it remembers.
    public var count: Int { buckets.count }

    /// Whether a redeem of `code` from `address` may be looked up now (and what it cost).
    public mutating func admit(_ address: String, code: String, now: Double) -> Admission {
        if live.contains(code) { return .liveCode }
        return take(address, now: now) ? .counted : .refused
    }

    /// How a redeem that `admit` let in ended.
    public enum Outcome: Sendable, Equatable {
        /// The code was good: its try is given back and the code is live from now on.
        case redeemed
        /// Unknown, expired, used up or revoked: the try stays spent and the code is not live.
        case wrongCode
        /// Refused for another reason (a bad display name, overload): the code was not judged,
        /// so the try is given back.
        case notJudged
    }

    /// The redeem that `admit` let in has finished.
    public mutating func settle(_ admission: Admission, address: String, code: String, _ outcome: Outcome, now: Double) {
        if outcome == .wrongCode {
            forget(code: code)
            return
        }
        if admission == .counted, var bucket = buckets[address] {
            bucket.giveBack(now: now)
            buckets[address] = bucket
        }
        if outcome == .redeemed { remember(code: code) }
    }

    /// `code` was just created through this server: its first redeem is never refused either.
    public mutating func remember(code: String) {
        guard live.insert(code).inserted else { return }
        liveOrder.append(code)
        if liveOrder.count > maxLiveCodes { live.remove(liveOrder.removeFirst()) }
    }

    /// Counts every try (unknown tokens, `TokenLookups`): true when `address` may try once more now.
    public mutating func allow(_ address: String, now: Double) -> Bool { take(address, now: now) }

    /// Seconds until a bucket that is empty now holds one try again (for Retry-After).
    public var retryAfterSeconds: Int { max(1, Int((1 / perSecond).rounded(.up))) }

    private mutating func take(_ address: String, now: Double) -> Bool {
        if buckets[address] == nil, buckets.count >= maxAddresses { forgetRefilled(now: now) }
        var bucket = buckets[address] ?? TokenBucket(perSecond: perSecond, burst: burst, now: now)
        let ok = bucket.take(now: now)
        buckets[address] = bucket
        lastSeen[address] = now
        return ok
    }

    private mutating func forget(code: String) {
        guard live.remove(code) != nil else { return }
        liveOrder.removeAll { $0 == code }
    }

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
