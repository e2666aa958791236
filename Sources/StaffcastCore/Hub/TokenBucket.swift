/// A token bucket: `burst` actions at once, refilled at `perSecond`. Used to limit how fast
/// one connection may send, so one runaway script cannot flood an event.
public struct TokenBucket: Sendable {
    public let perSecond: Double
    public let burst: Double
    private var tokens: Double
    private var last: Double

    public init(perSecond: Double, burst: Double, now: Double) {
        self.perSecond = perSecond
        self.burst = burst
        self.tokens = burst
        self.last = now
    }

    /// Takes one token if there is one. `now` is in seconds on any monotonic clock.
    public mutating func take(now: Double) -> Bool {
        tokens = min(burst, tokens + max(0, now - last) * perSecond)
        last = now
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }

    /// Gives back a token taken for an action that turned out not to count (a good invite code).
    public mutating func giveBack(now: Double) {
        tokens = min(burst, tokens + max(0, now - last) * perSecond + 1)
        last = now
    }
}
