import Foundation

/// Waits for `condition` to hold, asking every `poll` seconds until `timeout` has passed, and
/// says whether it held (checked once more at the deadline). The tests' one way to wait for
/// something to happen: a condition with a deadline, never a fixed sleep.
@discardableResult
func waitUntil(_ timeout: TimeInterval, poll: TimeInterval = 0.1, _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if try condition() { return true }
        Thread.sleep(forTimeInterval: min(poll, max(0, deadline.timeIntervalSinceNow)))
    }
    return try condition()
}
