import Foundation

/// The reconnect storm (`storm`) and idle memory per connection (`memory`).
extension Bench {
    func storm() {
        let n = o.stormConnections
        closePool()
        let s = openPool(n, window: o.stormWindow)
        // One message to everyone: are all of them really live?
        let t = traffic(n, .webSocket(.count(1), window: 1))
        let reached = t.publish.acked == 1 ? t.deliveries : 0
        let wall = s.wallSeconds
        var notes = "\(grouped(s.subscribed))/\(grouped(n)) subscribed (≤ \(o.stormWindow) handshakes in flight, since_seq set)"
        if s.failed > 0 { notes += "; \(grouped(s.failed)) failed: \(s.failureText)" }
        if s.timedOut { notes += "; gave up after \(Int(o.connectTimeout)) s" }
        if s.retries > 0 { notes += "; \(grouped(s.retries)) subscribes retried" }
        notes += "; CPU: server \(d(s.serverCPU, 2)) s (\(s.subscribed > 0 ? d(s.serverCPU * 1e6 / Double(s.subscribed), 0) : "—") µs each), "
            + "PostgreSQL \(d(s.postgresCPU, 2)) s, bench client \(d(s.clientCPU, 2)) s (all while connecting)"
        notes += "; probe message reached \(grouped(reached))/\(grouped(t.subscribers)), \(t.lossText)"
        if !t.publisherProblems.isEmpty { notes += "; " + t.publisherProblems }
        if let wall, s.subscribed == n, reached == n {
            results["storm.wall_s"] = wall
            results["storm.cpu_us"] = s.serverCPU * 1e6 / Double(n)
        } else {
            resultNotes["storm"] = "\(grouped(s.subscribed))/\(grouped(n)) subscribed, probe reached \(grouped(reached))"
        }
        rows.append(Row(scenario: "\(grouped(n)) connect + subscribe (storm): first connect → last `subscribed`",
                        measured: wall.map { fmt("%.3f s", $0) } ?? "—", target: "≤ 0.3 s",
                        met: (wall ?? .infinity) <= 0.3 && s.subscribed == n && reached == n && t.duplicates == 0,
                        notes: notes))
    }

    func memory() {
        let n = o.memoryConnections
        let s: OpenSummary
        var reused = false
        if poolSize == n, let p = poolOpen, p.subscribed > 0 {
            s = p
            reused = true
            log("  (the subscribers connected just before: VmRSS read then)")
        } else {
            s = openPool(n, window: o.stormWindow)
        }
        guard o.serverPID > 0, s.subscribed > 0, s.rssAfterKiB > 0 else {
            rows.append(Row(scenario: "idle memory per connection", measured: "—", target: "≤ 5 KiB", met: nil,
                            notes: "needs --server-pid and subscribed connections"))
            return
        }
        let per = Double(s.rssAfterKiB - s.rssBeforeKiB) / Double(s.subscribed)
        results["memory.kib"] = per
        var notes = "server \(o.serverPIDs.count > 1 ? "Pss (sum of \(o.serverPIDs.count) processes)" : "VmRSS") \(d(Double(s.rssBeforeKiB) / 1024)) → \(d(Double(s.rssAfterKiB) / 1024)) MiB with "
            + "\(grouped(s.subscribed)) idle subscribed connections (read \(num(o.settle)) s after the last subscribed)"
        if reused { notes += "; same connections as the storm" }
        if s.subscribed < n { notes += "; only \(grouped(s.subscribed))/\(grouped(n)) subscribed" }
        rows.append(Row(scenario: "idle memory per connection (VmRSS growth / N)", measured: fmt("%.2f KiB", per),
                        target: "≤ 5 KiB", met: per <= 5 && s.subscribed == n, notes: notes))
    }
}
