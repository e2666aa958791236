import Foundation
import Logging
import Synchronization

/// Starts the embedded PostgreSQL again when it dies under a running `staffcast serve` (a crash,
/// the OOM killer, kill -9 of the postmaster). Without it the server stayed "not ready" until
/// someone ran `staffcast cluster start` by hand (attack round); the servers reconnect by
/// themselves once it is back. A cluster stopped on purpose is left stopped
/// (`EmbeddedCluster.hasCrashed`).
///
/// One thread of its own checks every `interval` seconds (a file read and a `kill(pid, 0)`);
/// a restart waits for PostgreSQL's recovery, at most 60 s, on that thread and nowhere else.
public final class ClusterWatchdog: Sendable {
    private let cluster: EmbeddedCluster
    private let logger: Logger
    private let interval: Double
    private let wake = DispatchSemaphore(value: 0)
    private let ended = DispatchSemaphore(value: 0)
    private let stopping = Atomic<Bool>(false)

    public init(cluster: EmbeddedCluster, logger: Logger, interval: Double = 2) {
        self.cluster = cluster
        self.logger = logger
        self.interval = interval
    }

    public func start() {
        let thread = Thread { [self] in
            defer { ended.signal() }
            var lastSaid: Date?
            while !stopping.load(ordering: .acquiring) {
                _ = wake.wait(timeout: .now() + interval)
                guard !stopping.load(ordering: .acquiring), cluster.hasCrashed else { continue }
                // Said once, then once a minute while starting it keeps failing.
                let now = Date()
                let say = lastSaid.map { now.timeIntervalSince($0) >= 60 } ?? true
                if say {
                    lastSaid = now
                    logger.error("the embedded PostgreSQL is gone (it crashed or was killed); starting it again")
                }
                do {
                    if try cluster.restartAfterCrash() {
                        lastSaid = nil
                        logger.notice("the embedded PostgreSQL runs again (it recovered what was committed); reconnecting")
                    }
                } catch {
                    if say {
                        logger.error("the embedded PostgreSQL did not start again; trying again every \(Int(interval)) s",
                                     metadata: ["error": "\(error)"])
                    }
                }
            }
        }
        thread.name = "staffcast-cluster-watchdog"
        thread.start()
    }

    /// Ends the thread, waiting at most 15 s for a restart in progress (the service manager
    /// allows a stop 30 s: packaging/staffcast.service). Call before the cluster is stopped, so
    /// that a stop is not taken for a crash; a restart still running then holds the data dir's
    /// lock, and the stop waits for it (`DatabaseTarget.release`).
    public func stop() {
        guard !stopping.exchange(true, ordering: .acquiringAndReleasing) else { return }
        wake.signal()
        _ = ended.wait(timeout: .now() + 15)
    }
}
