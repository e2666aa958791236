import Foundation

/// A named thread for the load clients: its body asks `isStopped` between steps and returns
/// once it is set; `stop()` sets it and returns when the body has ended. `isStopped` may be read
/// from any thread.
final class StoppableThread: @unchecked Sendable {
    private let lock = NSLock()
    private var stopped = false
    private let done = DispatchSemaphore(value: 0)

    var isStopped: Bool { lock.withLock { stopped } }

    func start(name: String, _ body: @escaping @Sendable () -> Void) {
        let t = Thread { [done] in body(); done.signal() }
        t.name = name
        t.start()
    }

    func stop() {
        lock.withLock { stopped = true }
        done.wait()
    }
}
