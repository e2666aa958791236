/// This server's own send batches between their commit and its change listener's wake-up:
/// which of them were handed to the loops already (`LocalFanoutGate`), so that a wake-up made
/// only of them needs no read of the logs.
///
/// Each batch gets a number before it commits; its NOTIFY says `message@<origin>:<number>`
/// (sql/014), so the listener knows exactly which batches woke it. A batch not decided yet (its
/// notification can beat its worker's `COMMIT` answer by microseconds) is "wait"; one that was
/// left to the feed, failed, or is no longer remembered is "read". Bounded: at most `capacity`
/// decisions are kept, oldest forgotten first (a forgotten one reads, which is always safe);
/// they are forgotten a quarter of `capacity` at a time, so that a decision costs no shift of
/// the whole list.
///
/// Pure: no I/O, no lock (`ChangeFeed` owns one behind its mutex).
public struct OwnSendBatches: Sendable {
    public static let capacity = 4_096

    public enum Verdict: Sendable, Equatable {
        /// Every batch named was handed on: nothing to read.
        case skip
        /// One is still deciding.
        case wait
        /// One was left to the feed (or is unknown): read.
        case read
    }

    private var next: UInt64 = 0
    private var undecided: Set<UInt64> = []
    private var handedOn: [UInt64: Bool] = [:]
    private var order: [UInt64] = []

    public init() {}

    /// A batch starts committing: its number, for its wake-up.
    public mutating func begin() -> UInt64 {
        next += 1
        undecided.insert(next)
        return next
    }

    /// What became of batch `n`: handed on, or not (left to the feed, or its commit failed).
    public mutating func decide(_ n: UInt64, handedOn value: Bool) {
        guard undecided.remove(n) != nil else { return }
        handedOn[n] = value
        order.append(n)
        if order.count > Self.capacity {
            let drop = order.count - Self.capacity + Self.capacity / 4
            for old in order.prefix(drop) { handedOn[old] = nil }
            order.removeFirst(drop)
        }
    }

    public func verdict(_ batches: [UInt64]) -> Verdict {
        var waiting = false
        for n in batches {
            if undecided.contains(n) { waiting = true; continue }
            guard handedOn[n] == true else { return .read }
        }
        return waiting ? .wait : .skip
    }

    /// Batches begun and not decided yet.
    public var deciding: Int { undecided.count }
}
