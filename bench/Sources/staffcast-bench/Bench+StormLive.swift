import Foundation

/// `storm-live` (issue 19, point 6): does a reconnect storm hold up live delivery on the same
/// server? `STORM_LIVE_SUBSCRIBERS` subscribers get `STORM_LIVE_RATE` messages a second for
/// `DURATION` seconds twice: once on a quiet server, once while `STORM_LIVE_CONNECTIONS` other
/// clients reconnect over and over (connect, upgrade, subscribe with `since_seq`, then a
/// reset, as a crowd whose Wi-Fi drops does). The row gives send→receipt p99 and max of both
/// runs; the target is the storm's p99 within a few milliseconds of the quiet one.
extension Bench {
    func stormLive() {
        let n = o.stormLiveSubscribers
        let kind = PublisherKind.webSocket(.paced(rate: o.stormLiveRate, duration: o.duration), window: o.paceWindow)
        log("  quiet: \(grouped(n)) subscribers at \(num(o.stormLiveRate)) msg/s")
        let quiet = traffic(n, kind)

        // The storm's own clients, on their own threads (not the measured subscribers' loops).
        let stormLoops = (0..<max(1, o.readers)).map { _ in SubscriberLoop(host: o.host, ports: [o.port], token: o.subscriberToken) }
        stormLoops.forEach { $0.subscribeInURL = o.subscribeInURL }
        stormLoops.forEach { $0.start() }
        let state = StormState()
        let done = DispatchSemaphore(value: 0)
        let since = currentBase()
        let m = o.stormLiveConnections
        let window = o.stormWindow
        let event = o.event
        let timeout = o.connectTimeout
        let thread = Thread {
            while true {
                if state.read({ $0.stopping }) { break }
                for (i, l) in stormLoops.enumerated() {
                    let share = m / stormLoops.count + (i < m % stormLoops.count ? 1 : 0)
                    l.lock.lock()
                    l.beginOpening(share, event: event, sinceSeq: since, window: max(1, window / stormLoops.count))
                    l.lock.unlock()
                }
                let start = monoNs()
                while Double(monoNs() - start) / 1e9 < timeout {
                    let settled = stormLoops.reduce(0) { sum, l in
                        l.lock.lock()
                        defer { l.lock.unlock() }
                        return sum + l.open.subscribed + l.open.failed
                    }
                    if settled >= m { break }
                    usleep(2_000)
                }
                var failed = 0
                for l in stormLoops {
                    l.lock.lock()
                    failed += l.open.failed
                    l.closeAll()
                    l.lock.unlock()
                }
                state.update { $0.cycles += 1; $0.failures += failed }
            }
            done.signal()
        }
        thread.start()
        log("  storm: \(grouped(n)) subscribers at \(num(o.stormLiveRate)) msg/s while \(grouped(m)) clients reconnect over and over")
        let stormed = traffic(n, kind)
        state.update { $0.stopping = true }
        done.wait()
        let (cycles, stormFailures) = state.read { ($0.cycles, $0.failures) }
        stormLoops.forEach { $0.stop() }

        let quietP99 = quiet.sendToReceipt.percentileMs(0.99)
        let stormP99 = stormed.sendToReceipt.percentileMs(0.99)
        var notes = "quiet p99 \(ms(quietP99)), max \(ms(quiet.sendToReceipt.maxMs)); during storms max \(ms(stormed.sendToReceipt.maxMs)); "
        notes += "\(cycles) reconnect rounds of \(grouped(m))"
        if stormFailures > 0 { notes += " (\(grouped(stormFailures)) failed)" }
        notes += "; quiet \(quiet.lossText); storm \(stormed.lossText)"
        if !stormed.publisherProblems.isEmpty { notes += "; " + stormed.publisherProblems }
        let met = (stormP99 ?? .infinity) <= (quietP99 ?? .infinity) + 5 && stormed.lost + stormed.lostOnClosed == 0
            && stormed.duplicates == 0 && cycles > 0
        addRow(Row(scenario: "live p99 during reconnect storms (\(grouped(n)) subscribers, \(num(o.stormLiveRate)) msg/s, \(grouped(m)) reconnecting)",
                   measured: ms(stormP99), target: "≤ quiet p99 + 5 ms", met: met, notes: notes))
    }
}

/// What the storm thread and the driver share (under its lock).
private final class StormState: @unchecked Sendable {
    struct Values {
        var stopping = false
        var cycles = 0
        var failures = 0
    }

    private let lock = NSLock()
    private var values = Values()

    func read<T>(_ body: (Values) -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body(values)
    }

    func update(_ body: (inout Values) -> Void) {
        lock.lock()
        defer { lock.unlock() }
        body(&values)
    }
}
