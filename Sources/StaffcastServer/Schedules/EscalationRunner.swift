import Foundation
import Logging
import StaffcastCore
import StaffcastPostgres
import Synchronization

/// Looks for due reminder/escalation rounds every `policy.checkEverySeconds` (driven by the
/// server's ticker) and runs them on a database worker (`Store.runDueEscalations`). At most one
/// pass at a time per server; several servers on one database share the work through
/// `FOR UPDATE SKIP LOCKED`, so each round runs exactly once. The rounds' frames reach clients
/// through the change feed like everything else committed.
final class EscalationRunner: Sendable {
    private let workers: DatabaseWorkers
    private let policy: EscalationPolicy
    private let logger: Logger
    /// (a pass is in flight, when the last pass started, monotonic s).
    private let state = Mutex<(running: Bool, last: Double)>((false, -.infinity))

    init(workers: DatabaseWorkers, policy: EscalationPolicy, logger: Logger) {
        self.workers = workers
        self.policy = policy
        self.logger = logger
    }

    /// Called by the ticker (once a second); starts a pass when one is due and none runs.
    func tick(now: Double) {
        let every = policy.checkEverySeconds
        let start: Bool = state.withLock {
            guard !$0.running, now - $0.last >= every else { return false }
            $0.running = true
            $0.last = now
            return true
        }
        guard start else { return }
        let policy = self.policy
        let logger = self.logger
        let accepted = workers.submit { [self] session in
            defer { finished() }
            do {
                let steps = try session.store().runDueEscalations(policy: policy)
                for step in steps {
                    if let round = step.round {
                        logger.info("escalation round", metadata: [
                            "message_id": LogValue.id(step.messageID), "event_id": LogValue.id(step.eventID), "round": LogValue.number(round),
                            "unread": LogValue.number(step.unread.count), "finished": "\(step.finished ?? "-")"])
                    } else {
                        logger.info("escalation finished", metadata: [
                            "message_id": LogValue.id(step.messageID), "reason": "\(step.finished ?? "-")"])
                    }
                }
            } catch {
                session.dropIfBroken()
                logger.warning("escalation pass failed; it runs again on the next tick", metadata: ["error": "\(error)"])
            }
        }
        if !accepted { finished() }
    }

    private func finished() { state.withLock { $0.running = false } }
}
