import Foundation

/// The last few live messages the hub published, across all events, oldest first.
///
/// A subscribe is answered from a database snapshot taken on a worker thread; by the time the
/// answer reaches the service thread the hub may have published newer messages. Those are
/// replayed from here, so the subscriber sees no gap. Bounded: `capacity` entries; when full the
/// oldest is dropped and `evictedThrough` remembers how far that reached, so a caller can tell
/// whether the window still covers what it needs.
public struct RecentMessages<Frame> {
    public struct Entry {
        public var seq: Int64
        public var eventID: UUID
        public var expiresAt: Date?
        public var frame: Frame
        /// Only these users may be given it (a message to teams); nil: everyone subscribed.
        public var audience: Set<UUID>? = nil
    }

    public let capacity: Int
    private var entries: [Entry] = []
    private var head = 0
    /// Every seq up to this one has left the window (or was never in it).
    public private(set) var evictedThrough: Int64

    public init(capacity: Int, startingAfter seq: Int64) {
        precondition(capacity > 0)
        self.capacity = capacity
        self.evictedThrough = seq
        entries.reserveCapacity(capacity)
    }

    public var count: Int { entries.count }

    public mutating func append(_ entry: Entry) {
        if entries.count < capacity {
            entries.append(entry)
        } else {
            evictedThrough = max(evictedThrough, entries[head].seq)
            entries[head] = entry
            head = (head + 1) % capacity
        }
    }

    /// Unexpired frames of `eventID` with seq in `(after, through]` that `user` is in the
    /// audience of, in seq order; nil when some of that range has already been evicted.
    public func frames(of eventID: UUID, after: Int64, for user: UUID? = nil, now: Date) -> [Frame]? {
        guard after >= evictedThrough else { return nil }
        var out: [Frame] = []
        for i in 0..<entries.count {
            let e = entries[(head + i) % entries.count]
            if e.seq > after, e.eventID == eventID, !(e.expiresAt.map { $0 <= now } ?? false),
               e.audience.map({ audience in user.map(audience.contains) ?? false }) ?? true {
                out.append(e.frame)
            }
        }
        return out
    }
}
