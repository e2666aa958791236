import Foundation
import Logging
import StaffcastCore
import StaffcastPostgres
import Synchronization

/// Drives the outbox (sql/012_reach.sql) on this server. Once a second (the server's ticker) it
/// hands one pass to a database worker — never two at once: committed messages become push and
/// email rows (`Store.expandFanouts`), then due deliveries are claimed and leased
/// (`Store.claimDeliveries`, `FOR UPDATE SKIP LOCKED`), only as many as the `DeliveryPool` has
/// room for. The pool's threads do the I/O; each result goes through `RetryPolicy` and is
/// recorded by a database worker. Nothing here runs on a service loop.
final class OutboxRunner: Sendable {
    private let workers: DatabaseWorkers
    private let configuration: ReachConfiguration
    private let node: String
    private let logger: Logger
    private let policy = RetryPolicy()
    private let pass: SinglePass
    private let pool: DeliveryPool
    /// Outcomes not yet written (database down, or stopping): written by the next pass.
    private let unrecorded: UnrecordedAttempts
    /// Seconds a claimed row stays leased to this server unless renewed; renewed every
    /// `renewEvery` seconds while the server lives (`Store.renewLeases`), so a live server keeps
    /// what waits in its queue, and a server that died lets go within a minute. (It was 300 s
    /// without renewal: a killed server held a webhook's feed, which goes one at a time, for
    /// five minutes; attack round.)
    static let leaseSeconds = 60
    static let renewEvery = 15.0
    /// When the leases were last renewed (monotonic seconds).
    private let lastRenewal = Mutex<Double>(0)
    /// The rows this process holds, and whether each lease leaves time for an attempt.
    private let held: Held

    init(workers: DatabaseWorkers, configuration: ReachConfiguration, deliverer: Deliverer, node: String, logger: Logger,
         metrics: ServerMetrics) {
        self.workers = workers
        self.configuration = configuration
        self.node = node
        self.logger = logger
        pass = SinglePass(workers: workers, logger: logger, name: "outbox")
        let held = Held(HeldLeases(leaseSeconds: Double(Self.leaseSeconds), margin: configuration.attemptTimeout + 5))
        self.held = held
        let policy = self.policy
        let unrecorded = UnrecordedAttempts()
        self.unrecorded = unrecorded
        // Filled below: the pool's completion needs the runner's recorder.
        let kick = Mutex<(@Sendable () -> Void)?>(nil)
        let recorder = Recorder(workers: workers, policy: policy, logger: logger, metrics: metrics, unrecorded: unrecorded, node: node) {
            kick.withLock { $0 }?()
        }
        pool = DeliveryPool(threads: configuration.threads, concurrencyPerHost: configuration.concurrencyPerHost,
                            concurrencyPerPerson: configuration.concurrencyPerPerson,
                            capacity: max(16, configuration.threads * 8),
                            makeHandles: { [timeout = configuration.attemptTimeout, ca = configuration.caFile] in
                                CurlHandles(timeout: timeout, caFile: ca)
                            },
                            mayStart: { [logger] item in
                                let now = ServiceLoop.monotonicNow()
                                guard held.state.withLock({ $0.start(item.id, now: now) }) else {
                                    logger.warning("outbox: a delivery's lease may have run out before it could start; left for the next claim",
                                                   metadata: ["delivery": "\(item.deliveryID)"])
                                    return false
                                }
                                return true
                            },
                            deliver: { deliverer.attempt($0, host: $1, handles: $2) },
                            finished: { item, result in
                                held.state.withLock { $0.released(item.id) }
                                recorder.record(item, result)
                            })
        // After a webhook attempt is recorded a pass starts at once (not at the next tick): a
        // webhook's deliveries go one at a time, in order, and should not wait a second each.
        // Push and email are claimed in batches by the ticker's passes.
        kick.withLock { $0 = { [weak self] in self?.tick() } }
    }

    /// Called by the ticker; starts a pass unless one is running. Never waits.
    func tick() {
        let room = pool.room
        let emailAfter = configuration.emailEnabled ? configuration.emailAfterSeconds : nil
        pass.start { [self] store in
            try recordKept(store)
            let now = ServiceLoop.monotonicNow()
            if lastRenewal.withLock({ now - $0 >= Self.renewEvery }) {
                let renewed = try store.renewLeases(node: node, leaseSeconds: Self.leaseSeconds)
                lastRenewal.withLock { $0 = now }
                held.state.withLock { $0.renewed(renewed, now: now) }
            }
            // A backlog (after every server was down) is expanded 200 messages at a time.
            for _ in 0..<10 {
                if try store.expandFanouts(emailAfterSeconds: emailAfter) < 200 { break }
            }
            let claimedAt = ServiceLoop.monotonicNow()
            let claimed = try store.claimDeliveries(node: node, limit: room, leaseSeconds: Self.leaseSeconds)
            // A row claimed again while its earlier claim still waits in the pool (its lease had
            // run out) keeps the one place in the queue, under the new lease.
            let fresh = held.state.withLock { $0.claimed(claimed.map(\.id), now: claimedAt) }
            let items = claimed.filter { fresh.contains($0.id) }
            if !items.isEmpty {
                logger.debug("outbox: claimed deliveries", metadata: ["count": "\(items.count)"])
                let refused = pool.enqueue(items)
                held.state.withLock { h in for item in refused { h.released(item.id) } }
                if !refused.isEmpty {
                    // Full or stopping: back to the outbox now rather than after the lease.
                    try store.releaseLeases(refused.map(\.id), node: node)
                    logger.info("outbox: deliveries left for a later pass (delivery queue full or stopping)",
                                metadata: ["count": "\(refused.count)"])
                }
            }
        }
    }

    /// Trims finished rows (once a minute from the ticker, on a worker).
    func trim() {
        let logger = self.logger
        _ = workers.submit { session in
            do {
                let n = try session.store().pruneOutbox()
                if n > 0 { logger.info("outbox: trimmed finished deliveries", metadata: ["count": "\(n)"]) }
            } catch {
                session.dropIfBroken()
                logger.debug("outbox: trim failed", metadata: ["error": "\(error)"])
            }
        }
    }

    /// Writes the outcomes kept while the database was down; those it cannot write are kept.
    private func recordKept(_ store: Store) throws {
        let kept = unrecorded.take()
        for (i, attempt) in kept.enumerated() {
            do {
                try store.recordAttempt(attempt.item, attempt.recorded, statusCode: attempt.statusCode, node: node)
            } catch let error as PostgresError where error.isConnectionProblem {
                for rest in kept[i...] { unrecorded.keep(rest) }
                throw error
            } catch {
                // This one cannot be written (not the connection): dropped, so that it does not
                // hold up the pass; its row is tried again after its lease.
                logger.warning("outbox: a kept attempt outcome could not be recorded; dropped",
                               metadata: ["delivery": "\(attempt.item.deliveryID)", "error": "\(error)"])
            }
        }
        if !kept.isEmpty { logger.info("outbox: kept attempt outcomes recorded", metadata: ["count": "\(kept.count)"]) }
    }

    /// Ends the delivery threads after their current attempts — waiting for them up to
    /// `grace` seconds, at least the attempt timeout, so an email or push in flight is not sent
    /// again after the lease — records their outcomes, and gives back the leases of claimed
    /// items that had not started, so that the next server (or this one restarted) takes them
    /// at once instead of after the lease. Called before the workers stop.
    func stop(grace: Double) {
        let unstarted = pool.stop(timeout: max(grace, configuration.attemptTimeout + 1))
        held.state.withLock { h in for item in unstarted { h.released(item.id) } }
        let node = self.node
        let logger = self.logger
        guard !unstarted.isEmpty || unrecorded.count > 0 else { return }
        _ = workers.submit { [self] session in
            do {
                let store = try session.store()
                try recordKept(store)
                try store.releaseLeases(unstarted.map(\.id), node: node)
            } catch {
                logger.warning("outbox: outcomes or leases not written before stopping; those deliveries are tried again after their lease",
                               metadata: ["error": "\(error)", "unrecorded": "\(unrecorded.count)"])
            }
        }
    }

    /// `HeldLeases` behind a lock, shared by the passes (claims, renewals) and the delivery
    /// threads (may an attempt start; it ended).
    final class Held: Sendable {
        let state: Mutex<HeldLeases>
        init(_ leases: HeldLeases) { state = Mutex(leases) }
    }

    /// Turns an attempt's result into the outbox's next state and records it on a worker. An
    /// outcome that cannot be recorded (database down, no worker took it) is kept and recorded
    /// by a later pass, before the row's lease runs out.
    struct Recorder: Sendable {
        let workers: DatabaseWorkers
        let policy: RetryPolicy
        let logger: Logger
        let metrics: ServerMetrics
        let unrecorded: UnrecordedAttempts
        /// This server's name in the outbox's leases.
        let node: String
        /// Called once the attempt is recorded.
        let recorded: @Sendable () -> Void

        func record(_ item: OutboxItem, _ result: AttemptResult) {
            let now = Date()
            let outcome = policy.decide(kind: item.kind, result: result, attempts: item.attempts,
                                        now: now.timeIntervalSince1970, giveUpAt: item.giveUpAt.timeIntervalSince1970,
                                        jitter: Double.random(in: 0...1))
            let recorded: Store.Recorded
            let status: Int?, detail: String
            switch result {
            case .status(let code, _, let reply): (status, detail) = (code, "answered \(code)" + (reply.map { ": \($0)" } ?? ""))
            case .transportFailure(let why), .withdrawn(let why): (status, detail) = (nil, why)
            }
            switch outcome {
            case .delivered: recorded = .delivered
            case .gone: recorded = .gone
            case .retry(let at): recorded = .retry(at: Date(timeIntervalSince1970: at), error: detail)
            case .failed(let reason): recorded = .failed(error: reason)
            }
            let meta: Logger.Metadata = ["kind": "\(item.kind.rawValue)", "delivery": "\(item.deliveryID)",
                                         "attempt": "\(item.attempts)", "result": "\(detail)"]
            switch outcome {
            case .delivered: metrics.outboxAttempt(kind: item.kind.rawValue, outcome: "delivered")
            case .gone: metrics.outboxAttempt(kind: item.kind.rawValue, outcome: "gone")
            case .retry: metrics.outboxAttempt(kind: item.kind.rawValue, outcome: "retry")
            case .failed: metrics.outboxAttempt(kind: item.kind.rawValue, outcome: "failed")
            }
            switch outcome {
            case .delivered: logger.debug("outbox: delivered", metadata: meta)
            case .gone: logger.info("outbox: push subscription gone; deleted", metadata: meta)
            case .retry: logger.info("outbox: delivery will be retried", metadata: meta)
            case .failed: logger.warning("outbox: delivery failed for good", metadata: meta)
            }
            let logger = self.logger
            let done = self.recorded
            // Kept for as long as memory allows: the write itself checks the row is still ours
            // (`leased_by`), so a late outcome never overwrites another server's claim.
            let kept = UnrecordedAttempts.Attempt(item: item, recorded: recorded, statusCode: status,
                                                  keepUntil: now.addingTimeInterval(UnrecordedAttempts.keepSeconds))
            let unrecorded = self.unrecorded
            let queued = workers.submit { session in
                do {
                    try session.store().recordAttempt(item, recorded, statusCode: status, node: node)
                    if item.kind == .webhook { done() }
                } catch {
                    session.dropIfBroken()
                    unrecorded.keep(kept)
                    logger.warning("outbox: an attempt's outcome was not recorded; kept, and recorded once the database answers",
                                   metadata: ["delivery": "\(item.deliveryID)", "error": "\(error)"])
                }
            }
            if !queued {
                unrecorded.keep(kept)
                logger.warning("outbox: no database worker took the attempt's outcome (stopping or busy); kept, and recorded by a later pass",
                               metadata: ["delivery": "\(item.deliveryID)"])
            }
        }
    }
}
