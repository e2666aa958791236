import Foundation

/// How many messages every subscriber of a loop has (flatout-bounded), written by
/// the loop's thread and read by the publisher's without waiting for the loop's lock.
final class Progress: @unchecked Sendable {
    private let lock = NSLock()
    private var mark = 0
    var value: Int { lock.lock(); defer { lock.unlock() }; return mark }
    func set(_ v: Int) { lock.lock(); mark = v; lock.unlock() }
}
