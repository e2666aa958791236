import Foundation
import Prometheus
import Synchronization

/// Follows a sample of WebSocket sends through every stage from the frame's arrival to the
/// first and last write of the message to its subscribers, and records each stage's time in
/// `staffcast_stage_seconds{stage=…}` (docs/operations.md; `staffcast-bench` prints the
/// p50/p99 budget from it).
///
/// Cheap by construction: at most one send in `sampleInterval` is traced; the stamps ride in
/// what each stage already holds (the send's completion, the listener's batch, the loop's
/// delivery) and the only shared state is this lock over a table of at most `maxOpen` seqs
/// waiting for the change feed. Times are wall-clock seconds (`Date`): the one clock shared by
/// the worker, the listener and the loops, and by PostgreSQL's `sent_at`.
///
/// Any thread; the lock is held for a dictionary operation.
final class MessageTracer: Sendable {
    enum Stage: String, CaseIterable, Sendable {
        /// The frame's bytes handed to the engine → the send handed to its group commit.
        case parse
        /// → the batch's transaction started (`sent_at`, PostgreSQL's clock).
        case queue
        /// → `COMMIT` answered on the worker.
        case commit
        /// → the change listener starts its read (0 when the NOTIFY woke it before the
        /// committing worker saw its own answer).
        case wakeup
        /// The change-log read (one snapshot, one pipeline).
        case read
        /// Every live frame of the batch encoded once.
        case encode
        /// Posted to a service loop → the loop runs it (per loop).
        case handoff
        /// The engine queues the frame on every subscriber of the loop.
        case fanout
        /// → the first socket write that carries it (per loop).
        case firstWrite = "first_write"
        /// → the last of the loop's recipients has it written.
        case lastWrite = "last_write"
        /// Beside the fan-out: the sender's `sent`, posted to its loop after the commit → the
        /// loop runs it (its write then comes first at the turn's end: `writeFirst`).
        case answer
    }

    /// A traced send between its commit and the change feed.
    struct Committed: Sendable {
        var committed: Double
    }

    static let sampleInterval = 0.005
    static let maxOpen = 256
    /// From 10 µs: the stages are sub-millisecond when nothing waits.
    static let buckets: [Double] = [0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
                                    0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5]

    private let state = Mutex<(lastSampled: Double, open: [Int64: Committed], order: [Int64])>((0, [:], []))
    private let histograms: [Stage: ValueHistogram]

    init(registry: PrometheusCollectorRegistry) {
        var h: [Stage: ValueHistogram] = [:]
        for stage in Stage.allCases {
            h[stage] = registry.makeValueHistogram(
                descriptor: ServerMetrics.describe("staffcast_stage_seconds",
                                                   "A sample of WebSocket sends, from the frame's arrival to the last write to a subscriber, by stage (docs/operations.md)."),
                labels: [("stage", stage.rawValue)], buckets: Self.buckets)
        }
        histograms = h
    }

    static func now() -> Double { Date().timeIntervalSince1970 }

    func record(_ stage: Stage, _ seconds: Double) {
        histograms[stage]?.record(max(0, seconds))
    }

    /// True for at most one send per `sampleInterval`: this one is traced.
    func sample(at now: Double) -> Bool {
        state.withLock { s in
            guard now - s.lastSampled >= Self.sampleInterval else { return false }
            s.lastSampled = now
            return true
        }
    }

    /// A traced send committed as `seq`: records parse, queue and commit, and keeps its commit
    /// time for the change feed (the oldest is forgotten past `maxOpen`).
    func committed(seq: Int64, received: Double, submitted: Double, sentAt: Double, committed: Double) {
        record(.parse, submitted - received)
        record(.queue, sentAt - submitted)
        record(.commit, committed - sentAt)
        state.withLock { s in
            s.open[seq] = Committed(committed: committed)
            s.order.append(seq)
            if s.order.count > Self.maxOpen {
                let drop = s.order.count - Self.maxOpen
                for old in s.order.prefix(drop) { s.open[old] = nil }
                s.order.removeFirst(drop)
            }
        }
    }

    /// The change feed read `seqs`: the first of them that was traced here, taken out.
    func take(anyOf seqs: [Int64]) -> (seq: Int64, committed: Committed)? {
        state.withLock { s in
            guard !s.open.isEmpty else { return nil }
            for seq in seqs {
                if let c = s.open.removeValue(forKey: seq) {
                    s.order.removeAll { $0 == seq }
                    return (seq, c)
                }
            }
            return nil
        }
    }
}

/// A traced message on one service loop, from its batch's arrival there to its last write.
struct LoopWriteTrace {
    var frame: ObjectIdentifier
    var queuedAt: Double
    var remaining: Int
    var firstWritten = false
}
