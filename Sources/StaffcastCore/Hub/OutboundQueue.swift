/// The frames waiting to be written to one connection, bounded both in count and in bytes.
///
/// Policy when full: `push` refuses, and the server closes that connection as a slow client
/// (close code 4008). The client reconnects and catches up with `since_seq`; the server never
/// grows without bound for a reader that does not read.
public struct OutboundQueue<Frame> {
    public let maxFrames: Int
    public let maxBytes: Int
    private var items: [(frame: Frame, bytes: Int)?] = []
    private var head = 0
    public private(set) var count = 0
    public private(set) var bytes = 0

    public init(maxFrames: Int, maxBytes: Int) {
        precondition(maxFrames > 0 && maxBytes > 0)
        self.maxFrames = maxFrames
        self.maxBytes = maxBytes
    }

    public var isEmpty: Bool { count == 0 }

    /// Appends a frame; false (and nothing appended) when that would pass either bound.
    public mutating func push(_ frame: Frame, bytes size: Int) -> Bool {
        guard count < maxFrames, bytes + size <= maxBytes || count == 0 else { return false }
        items.append((frame, size))
        count += 1
        bytes += size
        return true
    }

    public var first: Frame? { count == 0 ? nil : items[head]?.frame }

    public mutating func popFirst() -> Frame? {
        guard count > 0, let item = items[head] else { return nil }
        items[head] = nil
        head += 1
        count -= 1
        bytes -= item.bytes
        // Compact now and then so the backing array does not creep.
        if head > 64 && head * 2 > items.count {
            items.removeFirst(head)
            head = 0
        }
        return item.frame
    }
}
