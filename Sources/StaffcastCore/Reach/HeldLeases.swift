/// The outbox rows a server process holds a lease on, and whether each lease still holds long
/// enough to start an attempt. A lease runs `leaseSeconds` from its claim or from the last
/// renewal of that row that succeeded; an attempt may start only if `margin` (an attempt's
/// time) is left, else it is skipped and the row, due again when the lease ends, is claimed
/// afresh (by this server or another). Without it, a server cut off from the database past a
/// lease kept sending what waited in its queue while another server claimed the same rows (a
/// review). A row claimed again while still held (its lease had run out) is not queued twice.
/// Pure: times are monotonic seconds the caller passes, and the caller owns the locking.
public struct HeldLeases: Sendable {
    /// Row → when its lease was last confirmed (claimed or renewed).
    private var confirmedAt: [Int64: Double] = [:]
    public let leaseSeconds: Double
    public let margin: Double

    public init(leaseSeconds: Double, margin: Double) {
        self.leaseSeconds = leaseSeconds
        self.margin = margin
    }

    /// Records a claim of `ids` at `now`; returns those not held already (to be queued).
    public mutating func claimed(_ ids: [Int64], now: Double) -> Set<Int64> {
        var fresh = Set<Int64>()
        for id in ids {
            if confirmedAt[id] == nil { fresh.insert(id) }
            confirmedAt[id] = now
        }
        return fresh
    }

    /// The leases of `ids` were renewed at `now` (those the database renewed: not run out).
    public mutating func renewed(_ ids: [Int64], now: Double) {
        for id in ids where confirmedAt[id] != nil { confirmedAt[id] = now }
    }

    /// Whether an attempt of `id` may start at `now`.
    public func mayStart(_ id: Int64, now: Double) -> Bool {
        guard let confirmed = confirmedAt[id] else { return false }
        return now < confirmed + leaseSeconds - margin
    }

    /// `mayStart`, and a row that may not is let go at once (one step under the caller's lock).
    public mutating func start(_ id: Int64, now: Double) -> Bool {
        if mayStart(id, now: now) { return true }
        released(id)
        return false
    }

    /// `id` is no longer held (attempted, skipped, or given back).
    public mutating func released(_ id: Int64) {
        confirmedAt[id] = nil
    }

    public var count: Int { confirmedAt.count }
}
