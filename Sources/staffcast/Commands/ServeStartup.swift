import Foundation
import Logging
import ServiceLifecycle
import StaffcastPostgres
import StaffcastServer

/// The first service of `staffcast serve`'s `ServiceGroup` (`ServerLifecycle`): opens the
/// database (starting the embedded cluster if need be), starts the server, prints the banner,
/// and tells the other services the server is up; on shutdown, which reaches it last, releases
/// the database (stopping the embedded cluster when no other server uses it).
///
/// `@unchecked Sendable`: `open` and `banner` are only called from `run`, once.
struct ServeStartup: Service, @unchecked Sendable {
    let configuration: ServerConfiguration
    let lifecycle: ServerLifecycle
    /// Opens the database target and the logger (`DatabaseOptions.open`).
    let open: () throws -> (DatabaseTarget, Logger)
    /// Said once the server is started (the command's logger, the port).
    let prepared: (DatabaseTarget, Logger) -> Void
    let banner: (StaffcastServer, DatabaseTarget) -> Void

    func run() async throws {
        let started: (StaffcastServer, DatabaseTarget, Logger)
        do {
            // Blocking work (a cluster start, `start`'s reads) off the concurrency pool.
            started = try await offPool {
                let (target, logger) = try open()
                prepared(target, logger)
                let server = StaffcastServer(configuration: configuration, conninfo: target.serverConninfo, logger: logger)
                do {
                    try server.start()
                } catch {
                    target.release(onlyIfStartedHere: false, logger: logger)
                    throw error
                }
                return (server, target, logger)
            }
        } catch {
            lifecycle.failed()
            throw error
        }
        let (server, target, logger) = started
        banner(server, target)
        lifecycle.started(server)
        // The embedded cluster is started again if it dies under the server.
        let watchdog = target.cluster.map { ClusterWatchdog(cluster: $0, logger: logger) }
        watchdog?.start()
        // The group shuts this service down last: every part of the server has stopped by then.
        try? await gracefulShutdown()
        await offPoolIgnoringErrors {
            watchdog?.stop() // before the cluster's stop, which is no crash
            server.stop() // nothing left to do unless the group was cancelled instead
            target.release(onlyIfStartedHere: false, logger: logger)
        }
    }
}

/// Runs blocking `work` on a thread of its own, not on one of the few threads Swift
/// concurrency shares between every task.
func offPool<T>(_ work: @escaping () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, Error>) in
        let box = UncheckedBox(work: work, continuation: continuation)
        Thread {
            do { box.continuation.resume(returning: try box.work()) } catch { box.continuation.resume(throwing: error) }
        }.start()
    }
}

func offPoolIgnoringErrors(_ work: @escaping () -> Void) async {
    _ = try? await offPool { () throws -> Void in work() }
}

/// Hands a closure to the thread `offPool` starts; only that thread uses it.
private struct UncheckedBox<T>: @unchecked Sendable {
    let work: () throws -> T
    let continuation: CheckedContinuation<T, Error>
}
