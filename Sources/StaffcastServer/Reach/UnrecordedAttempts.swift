import Foundation
import StaffcastPostgres
import Synchronization

/// Outcomes of delivery attempts that could not be written to the outbox yet (the database was
/// down, or no worker took the job): kept here and written by the runner's next pass, so a
/// delivery that was made is not made again. Written only while the row is still leased to
/// this server (`Store.recordAttempt` checks): once another server has taken it (this one's
/// lease ran out, unrenewed, while the database was away), the outcome is not written and the
/// delivery may be repeated. Each is kept at most `keepSeconds`. Any thread.
final class UnrecordedAttempts: Sendable {
    struct Attempt: Sendable {
        var item: OutboxItem
        var recorded: Store.Recorded
        var statusCode: Int?
        var keepUntil: Date
    }

    private let kept = Mutex<[Attempt]>([])
    /// An hour: a bound on memory, not on correctness (see above).
    static let keepSeconds = 3_600.0
    /// At most this many are kept (one per claimed delivery is the most there can be).
    static let limit = 10_000

    func keep(_ attempt: Attempt) {
        kept.withLock { if $0.count < Self.limit { $0.append(attempt) } }
    }

    /// Takes every outcome still worth recording.
    func take(now: Date = Date()) -> [Attempt] {
        kept.withLock { all in
            defer { all.removeAll() }
            return all.filter { $0.keepUntil > now }
        }
    }

    var count: Int { kept.withLock { $0.count } }
}
