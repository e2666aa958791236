import Foundation

/// `soak` (bench/soak.sh): `SOAK_CONNECTIONS` subscribed WebSockets held for `SOAK_MINUTES`
/// while the publisher sends `SOAK_RATE` messages a second; after every minute the server's
/// VmRSS, the connections still subscribed, and what was lost or doubled, one line each; at
/// the end VmRSS growth from the first minute to the last (the first minute's own growth is
/// warm-up: buffers, caches, the allocator settling) and from before the connections.
extension Bench {
    func soak() {
        let n = o.soakConnections
        let rssIdle = Proc.rssKiB(o.serverPID)
        let open = openSoakPool(n)
        let rssConnected = Proc.rssKiB(o.serverPID)
        log("  soak: \(grouped(open)) of \(grouped(n)) subscribed; server VmRSS \(mib(rssIdle)) before, \(mib(rssConnected)) connected")
        var samples: [Int] = []
        var acked = 0, deliveries = 0, lost = 0, duplicates = 0, worstP99 = 0.0
        var subscribedAtEnd = open
        let started = Date()
        for minute in 1...max(1, o.soakMinutes) {
            guard serverAlive else {
                log("  soak: the server process is gone (minute \(minute))")
                break
            }
            let t = soakMinute(n, rate: o.soakRate)
            let rss = Proc.rssKiB(o.serverPID)
            samples.append(rss)
            acked += t.publish.acked
            deliveries += t.deliveries
            lost += t.lost + t.lostOnClosed
            duplicates += t.duplicates
            subscribedAtEnd = t.subscribers
            worstP99 = max(worstP99, t.sendToReceipt.percentileMs(0.99) ?? 0)
            log("  soak: minute \(minute): VmRSS \(mib(rss)) (\(signedMiB(rss - (samples.first ?? rss))) since minute 1), "
                + "\(grouped(t.subscribers)) subscribed, \(grouped(t.publish.acked)) messages, \(grouped(t.deliveries)) deliveries, "
                + "lost \(t.lost + t.lostOnClosed), dup \(t.duplicates), p99 \(ms(t.sendToReceipt.percentileMs(0.99)))")
        }
        let first = samples.first ?? rssConnected, last = samples.last ?? rssConnected
        let minutes = Date().timeIntervalSince(started) / 60
        let notes = "\(grouped(subscribedAtEnd))/\(grouped(n)) subscribed at the end, \(d(minutes)) min at \(num(o.soakRate)) msg/s: "
            + "\(grouped(acked)) messages, \(grouped(deliveries)) deliveries, lost \(lost), dup \(duplicates), worst minute p99 \(ms(worstP99)); "
            + "VmRSS \(mib(rssIdle)) idle → \(mib(rssConnected)) connected → \(mib(first)) after minute 1 → \(mib(last)) at the end "
            + "(\(signedMiB(last - rssConnected)) since connected); per minute: " + samples.map(mib).joined(separator: ", ")
        log("  soak: VmRSS growth minute 1 → end \(signedMiB(last - first)), connected → end \(signedMiB(last - rssConnected))")
        addRow(Row(scenario: "soak: \(grouped(n)) connections for \(o.soakMinutes) min: server VmRSS growth, minute 1 → end",
                        measured: signedMiB(last - first), target: "flat", met: nil, notes: notes))
    }

    private func mib(_ kib: Int) -> String { d(Double(kib) / 1024) + " MiB" }
    private func signedMiB(_ kib: Int) -> String { (kib >= 0 ? "+" : "−") + mib(abs(kib)) }
}
