import CStaffcastSocket
import Foundation
import Logging
import StaffcastCore
import StaffcastPostgres

/// A server's once-a-second thread: posts `tick` to every loop (with the tokens the clock
/// expired), starts the passes of the scheduler, escalation and the outbox, writes presence
/// every `presenceInterval` and token use every `tokenUseInterval`, gives memory back after a
/// wave of closed connections, and trims once a minute. It only starts work: the passes run on
/// database workers, the ticks on the loops. Its fields are set before `start` and read by its
/// thread only; `stop` may be called from any thread.
final class Ticker: @unchecked Sendable {
    /// The passes started each second (nil: not configured here).
    struct Duties {
        var scheduler: ScheduledDispatcher?
        var escalations: EscalationRunner?
        var outbox: OutboxRunner?
    }

    /// Seconds between presence refreshes (other servers ignore rows older than 30 s).
    static let presenceInterval = 3.0
    /// Seconds between writes of which tokens were used (`staffcast admin token list`, last used).
    static let tokenUseInterval = 30.0

    private let loops: [ServiceLoop]
    private let directory: LoopDirectory
    private let gatekeeper: Gatekeeper
    private let workers: DatabaseWorkers
    private let nodeID: String
    private let logger: Logger
    private let duties: Duties
    private let stopped = DispatchSemaphore(value: 0)

    init(loops: [ServiceLoop], directory: LoopDirectory, gatekeeper: Gatekeeper, workers: DatabaseWorkers, nodeID: String,
         logger: Logger, duties: Duties) {
        self.loops = loops
        self.directory = directory
        self.gatekeeper = gatekeeper
        self.workers = workers
        self.nodeID = nodeID
        self.logger = logger
        self.duties = duties
    }

    func start() {
        let thread = Thread { [self] in run() }
        thread.name = "staffcast-ticker"
        thread.start()
    }

    /// Ends the thread at its next wake-up (within a second).
    func stop() { stopped.signal() }

    private func run() {
        var lastPresence = 0.0
        var lastTrim = ServiceLoop.monotonicNow()
        var lastUse = lastTrim
        var memory = MemoryTrimPolicy()
        while stopped.wait(timeout: .now() + 1) == .timedOut {
            let expired = gatekeeper.removeExpired()
            for loop in loops {
                loop.post { l in
                    // Tokens that expired by the clock close their sockets like revoked ones.
                    if !expired.isEmpty { l.deliver(CommittedBatch(expiredTokens: expired)) }
                    l.tick()
                }
            }
            duties.scheduler?.tick()
            let now = ServiceLoop.monotonicNow()
            // After a wave of closed connections (a flood of half-open TLS handshakes, a
            // crowd gone home), give the freed memory back; here, never on a loop.
            if memory.observe(held: loops.reduce(0) { $0 + $1.held.withLock { $0 } }, now: now) { _ = sc_malloc_trim() }
            if now - lastPresence >= Self.presenceInterval {
                lastPresence = now
                publishPresence()
            }
            duties.escalations?.tick(now: now)
            duties.outbox?.tick()
            if now - lastUse >= Self.tokenUseInterval {
                lastUse = now
                Self.flushTokenUse(gatekeeper: gatekeeper, workers: workers, logger: logger)
            }
            if now - lastTrim >= 60 {
                lastTrim = now
                gatekeeper.trimOpens()
                deleteStaleInvites()
                duties.outbox?.trim()
            }
        }
    }

    /// Writes `last_used_at` of the tokens used since the last call (on a worker).
    static func flushTokenUse(gatekeeper: Gatekeeper, workers: DatabaseWorkers, logger: Logger) {
        let used = gatekeeper.takeUsed()
        guard !used.isEmpty else { return }
        _ = workers.submit { session in
            do {
                try session.store().recordTokenUse(used)
            } catch {
                logger.debug("token use not recorded", metadata: ["error": "\(error)"])
            }
        }
    }

    /// Deletes invites that expired over a day ago (on a worker; every server does it, which
    /// is harmless).
    private func deleteStaleInvites() {
        let logger = self.logger
        _ = workers.submit { session in
            do {
                let n = try session.store().deleteStaleInvites()
                if n > 0 { logger.info("deleted expired invites", metadata: ["count": LogValue.number(n)]) }
            } catch {
                logger.debug("expired invites not deleted", metadata: ["error": "\(error)"])
            }
        }
    }

    /// Writes this server's subscriptions to the presence table (on a worker), so status on
    /// any server sees who is connected to this one.
    private func publishPresence() {
        let node = nodeID
        let logger = self.logger
        directory.collect { [workers] loops in
            let rows = loops.flatMap(\.members).map {
                Store.PresenceRow(node: node, connectionID: Int64($0.connectionID), userID: $0.userID, eventID: $0.eventID,
                                  connectedSince: $0.connectedSince, rttMs: $0.rtt.map { ($0 * 100_000).rounded() / 100 })
            }
            _ = workers.submit { session in
                do {
                    try session.store().replacePresence(node: node, rows: rows)
                } catch {
                    logger.debug("presence not written", metadata: ["error": "\(error)"])
                }
            }
        }
    }
}
