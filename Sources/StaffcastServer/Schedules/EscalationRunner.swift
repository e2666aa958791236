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
    private let policy: EscalationPolicy
    private let logger: Logger
    private let pass: SinglePass
    /// When the last pass was started (monotonic s).
    private let last = Mutex<Double>(-.infinity)

    init(workers: DatabaseWorkers, policy: EscalationPolicy, logger: Logger) {
        self.policy = policy
        self.logger = logger
        // A pass that keeps failing (the database down) is logged once a minute, not each second.
        pass = SinglePass(workers: workers, logger: logger, name: "escalation")
    }

    /// Called by the ticker (once a second); starts a pass when one is due and none runs.
    func tick(now: Double) {
        let every = policy.checkEverySeconds
        let due: Bool = last.withLock {
            guard now - $0 >= every else { return false }
            $0 = now
            return true
        }
        guard due else { return }
        let policy = self.policy
        let logger = self.logger
        pass.start { store in
            let steps = try store.runDueEscalations(policy: policy)
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
        }
    }
}
