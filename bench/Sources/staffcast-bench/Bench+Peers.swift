import Foundation

/// The scenarios of issue 21 that compare and scale: `flatout-bounded` (the side-by-side
/// table's flat-out row, run the same way against staffcast, nchan and NATS) and
/// `three-servers` (bench/three-servers.sh); and the results file bench/peers.sh collects.
extension Bench {
    /// 1,000 subscribers; the publisher keeps BOUNDED_WINDOW (16) requests in flight and never
    /// runs more than BOUNDED_AHEAD (1,000) messages ahead of the slowest subscriber, for
    /// FLATOUT_DURATION s: deliveries/s and send → receipt p50. The bound keeps a server that
    /// acknowledges faster than it delivers (all of them, flat out) from being measured on how
    /// much it can queue.
    func flatoutBounded() {
        let n = o.flatoutSubscribers
        boundAhead = o.boundedAhead
        defer { boundAhead = nil }
        let t = traffic(n, .webSocket(.flat(duration: o.flatoutDuration), window: o.boundedWindow))
        let rate = t.deliveriesPerSecond
        let p = t.publish
        let p50 = t.sendToReceipt.percentileMs(0.5)
        results["flatout.rate"] = rate
        results["flatout.p50_ms"] = p50
        if t.deliveries > 0 { results["flatout.cpu_per_delivery_us"] = t.serverCPU * 1e6 / Double(t.deliveries) }
        if t.lost + t.lostOnClosed > 0 || t.duplicates > 0 || t.subscribers < n {
            resultNotes["flatout"] = "lost \(grouped(t.lost + t.lostOnClosed)), dup \(grouped(t.duplicates)), \(grouped(t.subscribers)) subscribers"
        }
        var notes = "p50 \(ms(p50)), p99 \(ms(t.sendToReceipt.percentileMs(0.99))) send→receipt; \(grouped(p.acked)) msgs acked "
            + "(\(d(p.ackRate, 0)) msg/s) → \(grouped(t.deliveries)) deliveries; \(t.lossText); server CPU "
            + (t.deliveries > 0 ? fmt("%.2f µs", t.serverCPU * 1e6 / Double(t.deliveries)) : "—") + " per delivery"
        if t.subscribers < n { notes += "; \(grouped(t.subscribers)) of \(grouped(n)) subscribers" }
        if !t.publisherProblems.isEmpty { notes += "; " + t.publisherProblems }
        addRow(Row(scenario: "\(grouped(n)) subscribers flat out, \(o.boundedWindow) in flight, ≤ \(grouped(o.boundedAhead)) ahead of the slowest: deliveries/s",
                   measured: "\(grouped(Int(rate))) /s", target: "≥ NATS", met: nil, notes: notes))
    }

    /// Several staffcast servers on one database (bench/three-servers.sh starts them): the
    /// subscribers spread over them in turn, one publisher on the first; deliveries per server
    /// and send → receipt p50/p99. Every server gets each message from its own change feed
    /// (the publisher's server from its own commit path too): none may be lost or doubled.
    func threeServers() {
        let ports = o.subscriberPorts
        guard ports.count > 1 else {
            addRow(Row(scenario: "three servers on one database", measured: "—", target: "", met: nil,
                       notes: "not run: needs --subscriber-ports (bench/three-servers.sh starts the servers)"))
            return
        }
        let n = o.threeSubscribers
        let perPID0 = o.serverPIDs.map { Proc.cpuSeconds($0) }
        let t = traffic(n, .webSocket(.paced(rate: o.threeRate, duration: o.duration), window: o.paceWindow))
        let perPID = zip(o.serverPIDs, perPID0).map { Proc.cpuSeconds($0.0) - $0.1 }
        var subscribed = Array(repeating: 0, count: ports.count)
        for per in eachLoop({ $0.subscribedPerServer }) { for (i, v) in per.enumerated() { subscribed[i] += v } }
        let acked = t.publish.acked
        let split = ports.indices.map { i -> String in
            let got = i < t.perServer.count ? t.perServer[i] : 0
            let cpu = i < perPID.count ? ", CPU \(d(perPID[i], 2)) s" : ""
            return ":\(ports[i]) \(grouped(got)) of \(grouped(subscribed[i] * acked)) (\(grouped(subscribed[i])) subscribers\(cpu))"
        }
        log("  deliveries per server: " + split.joined(separator: "; "))
        let p99 = t.sendToReceipt.percentileMs(0.99)
        var notes = "p50 \(ms(t.sendToReceipt.percentileMs(0.5))); deliveries per server " + split.joined(separator: "; ")
            + "; \(t.lossText); publisher on :\(o.port), \(grouped(acked)) acked; PostgreSQL \(d(t.postgresCPU, 2)) s CPU"
        if !t.publisherProblems.isEmpty { notes += "; " + t.publisherProblems }
        let even = t.perServer.count == ports.count && t.perServer.allSatisfy { $0 > 0 }
        addRow(Row(scenario: "\(ports.count) servers on one database, \(grouped(n)) subscribers spread over them, \(num(o.threeRate)) msg/s: p99 send→receipt",
                   measured: ms(p99), target: "every server delivers, none lost",
                   met: even && t.lost + t.lostOnClosed == 0 && t.duplicates == 0 && t.complete, notes: notes))
    }

    /// A send-rate run's cost, for the results file (bench/three-servers.sh: NOTIFY and the
    /// change-log read per commit with 1 vs 3 listening servers): sends/s, and per committed
    /// send the CPU of PostgreSQL, of the publisher's server and of the other servers (their
    /// listeners woken by NOTIFY, reading the change log). Also logged.
    func noteSendCost(_ key: String, _ p: PublishResult, serverCPU: Double, firstServerCPU: Double, postgresCPU: Double) {
        guard p.acked > 0 else { return }
        let per = 1e6 / Double(p.acked)
        results[key + ".rate"] = p.ackRate
        results[key + ".pg_us"] = postgresCPU * per
        results[key + ".server_us"] = firstServerCPU * per
        let others = serverCPU - firstServerCPU
        if o.serverPIDs.count > 1 { results[key + ".other_servers_us"] = others * per }
        log("  per committed send: PostgreSQL \(fmt("%.1f", postgresCPU * per)) µs CPU, the publisher's server \(fmt("%.1f", firstServerCPU * per)) µs"
            + (o.serverPIDs.count > 1 ? ", the \(o.serverPIDs.count - 1) other servers \(fmt("%.1f", others * per)) µs" : ""))
    }

    /// `--results-file`: one line per figure, `key<TAB>value`, then `note:<row><TAB>text` for
    /// rows whose run was not clean (lost, doubled, held back): Comparison.swift reads them.
    func writeResults() {
        guard !o.resultsFile.isEmpty else { return }
        var text = "target\t\(o.target.rawValue)\n"
        // The settings the rows were measured with (the table's titles say them).
        let settings: [(String, Double)] = [
            ("set.latency1k.n", Double(o.latency1kSubscribers)), ("set.latency1k.rate", o.latency1kRate),
            ("set.latency10k.n", Double(o.latency10kSubscribers)), ("set.latency10k.rate", o.latency10kRate),
            ("set.storm.n", Double(o.stormConnections)), ("set.flatout.n", Double(o.flatoutSubscribers)),
            ("set.flatout.window", Double(o.boundedWindow)), ("set.flatout.ahead", Double(o.boundedAhead)),
            ("set.duration", o.duration), ("set.flatout.duration", o.flatoutDuration),
        ]
        for (k, v) in settings { text += "\(k)\t\(v)\n" }
        for (k, v) in results.sorted(by: { $0.key < $1.key }) { text += "\(k)\t\(v)\n" }
        for (k, v) in resultNotes.sorted(by: { $0.key < $1.key }) { text += "note:\(k)\t\(v)\n" }
        do { try text.write(toFile: o.resultsFile, atomically: true, encoding: .utf8) } catch {
            log("could not write --results-file \(o.resultsFile): \(error)")
        }
    }
}
