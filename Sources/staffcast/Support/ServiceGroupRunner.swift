import Dispatch
import Foundation
import Logging
import ServiceLifecycle
import Synchronization
import UnixSignals

/// Runs `staffcast serve`'s services in a swift-service-lifecycle `ServiceGroup` from the
/// command's synchronous `run`, until they end. The group owns SIGTERM and SIGINT: the first
/// shuts the services down gracefully, last first (`ServerLifecycle`); a second exits at once
/// (status 1) for whoever is in a hurry. Both are trapped before any service starts, so a
/// signal sent the instant the banner appears is never lost.
func runUntilStopped(_ services: [any Service]) throws {
    let outcome = Mutex<Result<Void, Error>?>(nil)
    let done = DispatchSemaphore(value: 0)
    Task {
        do {
            try await runGroup(services)
            outcome.withLock { $0 = .success(()) }
        } catch {
            outcome.withLock { $0 = .failure(error) }
        }
        done.signal()
    }
    done.wait()
    try outcome.withLock { $0 }?.get()
}

private func runGroup(_ services: [any Service]) async throws {
    // Counted before the group traps them too (every trap of a signal sees it).
    let signals = await UnixSignalsSequence(trapping: .sigterm, .sigint)
    let watcher = Task {
        var seen = 0
        for await _ in signals {
            seen += 1
            if seen > 1 { _exit(1) }
        }
    }
    defer { watcher.cancel() }
    // The group's own chatter (debug lines) stays out of the server's log.
    let quiet = Logger(label: "staffcast.lifecycle") { _ in SwiftLogNoOpLogHandler() }
    let group = ServiceGroup(configuration: ServiceGroupConfiguration(
        services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: quiet))
    try await group.run()
}
