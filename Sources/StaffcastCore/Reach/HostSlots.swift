/// A bound on concurrent deliveries per destination host (a push service, a mail relay, a
/// webhook receiver), and per owner (the person a push is for: one person's endpoints that
/// never answer cannot take every delivery thread, whatever hosts they name), with the items
/// that wait for a slot. Pure; its owner (`DeliveryPool`) holds it under a lock.
///
/// Bounded: at most `maxWaiting` items wait in all; `enqueue` refuses more (the caller leaves
/// them in the outbox for a later pass).
public struct HostSlots<Item>: Sendable where Item: Sendable {
    public let perHost: Int
    public let maxWaiting: Int
    public let perOwner: Int
    private var active: [String: Int] = [:]
    private var ownerActive: [String: Int] = [:]
    private var waiting: [String: [(item: Item, owner: String?)]] = [:]
    private var order: [String] = []
    public private(set) var waitingCount = 0

    public init(perHost: Int, maxWaiting: Int, perOwner: Int = .max) {
        self.perHost = max(1, perHost)
        self.maxWaiting = max(1, maxWaiting)
        self.perOwner = max(1, perOwner)
    }

    /// Room for this many more items.
    public var room: Int { maxWaiting - waitingCount }

    /// Adds an item for `host` (and `owner`, when it has one); false when full.
    public mutating func enqueue(_ item: Item, host: String, owner: String? = nil) -> Bool {
        guard waitingCount < maxWaiting else { return false }
        if waiting[host] == nil { order.append(host) }
        waiting[host, default: []].append((item, owner))
        waitingCount += 1
        return true
    }

    /// The next item that may start now (its host and its owner have a free slot), taking the
    /// slots; hosts are served in turn so one busy host does not starve the others, and within
    /// a host the first item whose owner has room goes.
    public mutating func next() -> (item: Item, host: String, owner: String?)? {
        for (i, host) in order.enumerated() where active[host, default: 0] < perHost {
            guard var queue = waiting[host],
                  let j = queue.firstIndex(where: { $0.owner.map { ownerActive[$0, default: 0] < perOwner } ?? true }) else { continue }
            let (item, owner) = queue.remove(at: j)
            waiting[host] = queue.isEmpty ? nil : queue
            order.remove(at: i)
            if waiting[host] != nil { order.append(host) }
            waitingCount -= 1
            active[host, default: 0] += 1
            if let owner { ownerActive[owner, default: 0] += 1 }
            return (item, host, owner)
        }
        return nil
    }

    /// A delivery to `host` (for `owner`) finished: its slots are free.
    public mutating func finished(host: String, owner: String? = nil) {
        let n = active[host, default: 0] - 1
        active[host] = n > 0 ? n : nil
        if let owner {
            let m = ownerActive[owner, default: 0] - 1
            ownerActive[owner] = m > 0 ? m : nil
        }
    }

    public func inFlight(host: String) -> Int { active[host, default: 0] }

    /// Takes every waiting item out (at shutdown: their leases are given back).
    public mutating func drain() -> [Item] {
        let all = order.flatMap { (waiting[$0] ?? []).map(\.item) }
        waiting = [:]
        order = []
        waitingCount = 0
        return all
    }
}
