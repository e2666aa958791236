import Foundation
import Logging
import StaffcastCore
import StaffcastPostgres
import Synchronization

/// The threads that do the outbox's network I/O (Web Push and webhook POSTs, SMTP), never a
/// service loop's or a database worker's. Items wait in `HostSlots`: at most
/// `concurrencyPerHost` in flight per destination host and `concurrencyPerPerson` per person a
/// push is for, and at most `capacity` waiting in all
/// (the runner claims only what fits, so nothing is refused; the rest stays in the outbox).
/// Each finished attempt is recorded by a database worker.
final class DeliveryPool: @unchecked Sendable {
    typealias Deliver = @Sendable (OutboxItem, String, CurlHandles) -> AttemptResult
    typealias Finished = @Sendable (OutboxItem, AttemptResult) -> Void
    /// Asked just before an attempt starts: false skips it (its lease may have run out).
    typealias MayStart = @Sendable (OutboxItem) -> Bool

    private let slots: Mutex<HostSlots<OutboxItem>>
    private let wake = NSCondition()
    private let stopped = Atomic<Bool>(false)
    private let running = DispatchGroup()
    private let deliver: Deliver
    private let finished: Finished
    private let mayStart: MayStart

    private let makeHandles: @Sendable () -> CurlHandles

    init(threads: Int, concurrencyPerHost: Int, concurrencyPerPerson: Int = .max, capacity: Int, makeHandles: @escaping @Sendable () -> CurlHandles,
         mayStart: @escaping MayStart = { _ in true }, deliver: @escaping Deliver, finished: @escaping Finished) {
        self.makeHandles = makeHandles
        self.mayStart = mayStart
        slots = Mutex(HostSlots(perHost: concurrencyPerHost, maxWaiting: capacity, perOwner: concurrencyPerPerson))
        self.deliver = deliver
        self.finished = finished
        for i in 0..<max(1, threads) {
            running.enter()
            let thread = Thread { [self] in
                run()
                running.leave()
            }
            thread.name = "staffcast-delivery-\(i)"
            thread.start()
        }
    }

    /// How many more items would be taken now.
    var room: Int { slots.withLock { $0.room } }

    /// Queues claimed items; returns those that did not fit (the caller lets their lease lapse).
    @discardableResult
    func enqueue(_ items: [OutboxItem]) -> [OutboxItem] {
        guard !stopped.load(ordering: .relaxed) else { return items }
        let refused: [OutboxItem] = slots.withLock { s in items.filter { !s.enqueue($0, host: Self.host(of: $0), owner: Self.owner(of: $0)) } }
        wake.lock()
        wake.broadcast()
        wake.unlock()
        return refused
    }

    /// Lets the threads end after their current attempt (waits at most `timeout` seconds) and
    /// returns the items that had not started.
    func stop(timeout: Double = 5) -> [OutboxItem] {
        let waiting = slots.withLock { $0.drain() }
        stopped.store(true, ordering: .relaxed)
        wake.lock()
        wake.broadcast()
        wake.unlock()
        _ = running.wait(timeout: .now() + timeout)
        return waiting
    }

    private func run() {
        // This thread's own libcurl handles, one per host (connections kept between attempts).
        let handles = makeHandles()
        while !stopped.load(ordering: .relaxed) {
            guard let (item, host, owner) = slots.withLock({ $0.next() }) else {
                wake.lock()
                _ = wake.wait(until: Date().addingTimeInterval(1))
                wake.unlock()
                continue
            }
            guard mayStart(item) else {
                slots.withLock { $0.finished(host: host, owner: owner) }
                continue
            }
            let outcome = deliver(item, host, handles)
            slots.withLock { $0.finished(host: host, owner: owner) }
            // A slot opened: another thread may start the next item of this host.
            wake.lock()
            wake.signal()
            wake.unlock()
            finished(item, outcome)
        }
    }

    /// Whose share of the threads a delivery uses: a push's person (any staff token can name
    /// endpoints that never answer); email and webhooks have none.
    static func owner(of item: OutboxItem) -> String? {
        guard case .push = item.target else { return nil }
        return item.userID?.uuidString
    }

    /// The host a delivery goes to (its per-host bound); email all goes to one relay.
    static func host(of item: OutboxItem) -> String {
        switch item.target {
        case .push(_, let endpoint, _, _, _, _, _): return URL(string: endpoint)?.host ?? endpoint
        case .webhook(_, let url, _, _, _): return URL(string: url)?.host ?? url
        case .email: return "smtp"
        }
    }
}
