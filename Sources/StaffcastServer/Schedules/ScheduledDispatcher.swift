import Foundation
import Logging
import StaffcastCore
import StaffcastPostgres

/// This server's share of sending scheduled messages (docs/protocol.md). Once a second
/// the ticker calls `tick`, which hands one pass to a database worker (never more than one at a
/// time): `Store.dispatchDueScheduled` claims due rows with `FOR UPDATE SKIP LOCKED`, so with
/// several servers each row is sent by exactly one of them, and a row that fell due while
/// every server was down is sent by the first pass after a start (marked late). The messages
/// reach subscribers through the change feed like any other.
final class ScheduledDispatcher: Sendable {
    private let logger: Logger
    private let metrics: ServerMetrics
    private let pass: SinglePass
    /// A scheduled emergency escalates like one sent now (`EscalationPolicy`).
    private let emergencyEscalation: Int?

    init(workers: DatabaseWorkers, logger: Logger, metrics: ServerMetrics, emergencyEscalation: Int? = nil) {
        self.emergencyEscalation = emergencyEscalation
        self.logger = logger
        self.metrics = metrics
        pass = SinglePass(workers: workers, logger: logger, name: "scheduled sends")
    }

    /// Starts a pass unless one is still running. Never waits.
    func tick() {
        let logger = self.logger
        let metrics = self.metrics
        pass.start { [emergencyEscalation] store in
            // A backlog (after every server was down) goes out in passes of 100.
            for _ in 0..<50 {
                let result = try store.dispatchDueScheduled(emergencyEscalation: emergencyEscalation)
                for s in result.sent {
                    metrics.messageSent(type: s.messageType.rawValue, priority: s.priority.rawValue)
                    logger.info("scheduled send went out", metadata: [
                        "scheduled_id": LogValue.id(s.id), "message_id": LogValue.id(s.messageID),
                        "event_id": LogValue.id(s.eventID), "late": "\(s.late)"])
                }
                for s in result.dropped {
                    logger.warning("scheduled send dropped", metadata: [
                        "scheduled_id": LogValue.id(s.id), "event_id": LogValue.id(s.eventID), "note": "\(s.note ?? "")"])
                }
                if !result.more { break }
            }
        }
    }
}
