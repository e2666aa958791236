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
}
