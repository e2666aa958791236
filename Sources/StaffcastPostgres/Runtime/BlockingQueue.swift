import Foundation

/// A bounded FIFO that producers fill without blocking (`offer` says no when full) and
/// consumer threads drain, sleeping while it is empty. Thread-safe.
public final class BlockingQueue<Element: Sendable>: @unchecked Sendable {
    private let condition = NSCondition()
    private var items: [Element] = []
    private var head = 0
    private var closed = false
    public let capacity: Int

    public init(capacity: Int) { self.capacity = capacity }

    /// Adds `item` unless the queue is full or closed.
    public func offer(_ item: Element) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard !closed, items.count - head < capacity else { return false }
        items.append(item)
        condition.signal()
        return true
    }

    /// The next item, waiting for one; nil once the queue is closed and empty.
    public func take() -> Element? {
        condition.lock()
        defer { condition.unlock() }
        while items.count == head && !closed { condition.wait() }
        guard items.count > head else { return nil }
        let item = items[head]
        head += 1
        if head > 256 && head * 2 > items.count {
            items.removeFirst(head)
            head = 0
        }
        return item
    }

    public var count: Int {
        condition.lock()
        defer { condition.unlock() }
        return items.count - head
    }

    /// Wakes every consumer; items already queued are still handed out.
    public func close() {
        condition.lock()
        closed = true
        condition.broadcast()
        condition.unlock()
    }
}
