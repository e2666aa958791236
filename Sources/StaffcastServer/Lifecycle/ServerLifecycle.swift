import Foundation
import Logging
import ServiceLifecycle
import Synchronization

/// `staffcast serve` as services of a swift-service-lifecycle `ServiceGroup`, which owns
/// SIGTERM/SIGINT and the order of the shutdown. A `ServiceGroup` starts its services all at
/// once and shuts them down one at a time, last first; so the start stays one sequence
/// (`StaffcastServer.start`, run by the first service, `startup`), and each later service
/// waits for it, then for the group's graceful shutdown, then stops its part:
///
///   startup (release what it opened) ← database workers ← readiness probe ← change listener
///   ← outbox ← ticker ← service loops (drain: 1001 to every WebSocket, answers with
///   `Connection: close`, at most `shutdown_grace`)
///
/// shuts down right to left: the loops drain while the ticker still ticks their deadlines, and
/// the workers go last, after this server's presence rows are deleted. Any thread.
public final class ServerLifecycle: Sendable {
    private let shared = Mutex<Shared>(Shared())

    private struct Shared {
        var server: StaffcastServer?
        var settled = false
        var waiters: [CheckedContinuation<StaffcastServer?, Never>] = []
    }

    public init() {}

    /// `start` ran: the parts' services may stop `server` on shutdown.
    public func started(_ server: StaffcastServer) { settle(server) }

    /// Nothing was started (a failure before or in `start`): the parts have nothing to stop.
    public func failed() { settle(nil) }

    private func settle(_ server: StaffcastServer?) {
        let waiters = shared.withLock { s -> [CheckedContinuation<StaffcastServer?, Never>] in
            guard !s.settled else { return [] }
            s.settled = true
            s.server = server
            defer { s.waiters = [] }
            return s.waiters
        }
        for waiter in waiters { waiter.resume(returning: server) }
    }

    /// The started server, once `started` or `failed` was called (the startup service calls
    /// one of them whatever happens, so this wait ends with it).
    func server() async -> StaffcastServer? {
        await withCheckedContinuation { continuation in
            let ready: StaffcastServer?? = shared.withLock { s in
                guard s.settled else {
                    s.waiters.append(continuation)
                    return .none
                }
                return .some(s.server)
            }
            if case .some(let server) = ready { continuation.resume(returning: server) }
        }
    }

    /// The services in start order; `startup` starts the server (and calls `started` or
    /// `failed`), then waits for the graceful shutdown and releases what it opened.
    public func services(startup: any Service) -> [any Service] {
        [startup,
         Part(name: "database workers", lifecycle: self) { $0.stopWorkers() },
         Part(name: "readiness probe", lifecycle: self) { $0.stopProbe() },
         Part(name: "change listener", lifecycle: self) { $0.stopListener() },
         Part(name: "outbox", lifecycle: self) { $0.stopOutbox() },
         Part(name: "ticker", lifecycle: self) { $0.stopTicker() },
         Part(name: "service loops", lifecycle: self) { $0.drainLoops() }]
    }

    /// One part of a started server: stopped when the group shuts it down (or is cancelled).
    struct Part: Service, CustomStringConvertible {
        let name: String
        let lifecycle: ServerLifecycle
        let stop: @Sendable (StaffcastServer) -> Void

        var description: String { name }

        func run() async throws {
            guard let server = await lifecycle.server() else {
                // Nothing started: wait for the group to end (the startup's error cancels it), so
                // that error, not this service's return, is what the group reports.
                try? await gracefulShutdown()
                return
            }
            // Returns once the group shuts down gracefully; throws if it is cancelled: stop either way.
            try? await gracefulShutdown()
            // Stopping blocks (a drain takes up to `shutdown_grace`): on a thread of its own, not
            // on one of the few threads Swift concurrency shares between every task.
            let stop = self.stop
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                Thread {
                    stop(server)
                    done.resume()
                }.start()
            }
        }
    }
}
