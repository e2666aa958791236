/// A bound on concurrent deliveries per destination host (a push service, a mail relay, a
/// webhook receiver), with the items that wait for a slot. Pure; its owner (`DeliveryPool`)
/// holds it under a lock.
///
/// Bounded: at most `maxWaiting` items wait in all; `enqueue` refuses more (the caller leaves
/// them in the outbox for a later pass).
public struct HostSlots<Item>: Sendable where Item: Sendable {
    public let perHost: Int
    public let maxWaiting: Int
    private var active: [String: Int] = [:]
    private var waiting: [String: [Item]] = [:]
    private var order: [String] = []
    public private(set) var waitingCount = 0

    public init(perHost: Int, maxWaiting: Int) {
        self.perHost = max(1, perHost)
        self.maxWaiting = max(1, maxWaiting)
    }

    /// Room for this many more items.
    public var room: Int { maxWaiting - waitingCount }

    /// Adds an item for `host`; false when full.
    public mutating func enqueue(_ item: Item, host: String) -> Bool {
        guard waitingCount < maxWaiting else { return false }
        if waiting[host] == nil { order.append(host) }
        waiting[host, default: []].append(item)
        waitingCount += 1
        return true
    }

    /// The next item that may start now (its host has a free slot), taking the slot; hosts are
    /// served in turn so one busy host does not starve the others.
    public mutating func next() -> (item: Item, host: String)? {
        for (i, host) in order.enumerated() where active[host, default: 0] < perHost {
            guard var queue = waiting[host], !queue.isEmpty else { continue }
            let item = queue.removeFirst()
            waiting[host] = queue.isEmpty ? nil : queue
            order.remove(at: i)
            if waiting[host] != nil { order.append(host) }
            waitingCount -= 1
            active[host, default: 0] += 1
            return (item, host)
        }
        return nil
    }

    /// A delivery to `host` finished: its slot is free.
    public mutating func finished(host: String) {
        let n = active[host, default: 0] - 1
        active[host] = n > 0 ? n : nil
    }

    public func inFlight(host: String) -> Int { active[host, default: 0] }

    /// Takes every waiting item out (at shutdown: their leases are given back).
    public mutating func drain() -> [Item] {
        let all = order.flatMap { waiting[$0] ?? [] }
        waiting = [:]
        order = []
        waitingCount = 0
        return all
    }
}
