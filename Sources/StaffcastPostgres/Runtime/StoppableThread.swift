import Foundation
import Glibc
import Synchronization

/// A thread of its own that runs until asked to stop (`ChangeListener`, `DatabaseProbe`).
/// `stop` may be called from any thread; `stopping` and `sleep` are for the thread's body.
final class StoppableThread: Sendable {
    private let name: String
    private let stopRequested = Mutex(false)
    private let done = DispatchSemaphore(value: 0)

    init(name: String) { self.name = name }

    /// Runs `body` on a new thread; `stop` waits for it to return.
    func start(_ body: @escaping @Sendable () -> Void) {
        let thread = Thread { [done] in
            body()
            done.signal()
        }
        thread.name = name
        thread.start()
    }

    /// Asks the body to end and waits for it (at most `timeout` seconds).
    func stop(timeout: TimeInterval) {
        stopRequested.withLock { $0 = true }
        _ = done.wait(timeout: .now() + timeout)
    }

    var stopping: Bool { stopRequested.withLock { $0 } }

    /// Sleeps `seconds`, or less when asked to stop (it looks every 50 ms).
    func sleep(_ seconds: Double) {
        let end = Monotonic.now() + seconds
        while !stopping, Monotonic.now() < end { usleep(50_000) }
    }
}
