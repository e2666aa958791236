import Foundation

/// The durable path: committed sends per second over HTTP and WebSocket (`sendrate`, `sendrate1`, `sendrate-ws`, `sendrate-paced`) and catch-up after a backlog (`catchup`).
extension Bench {
    /// `connections` keep-alive HTTP connections, one POST at a time each, as fast as answers
    /// come, for DURATION s, no subscribers: sends committed per second and the answer time.
    func sendrate(connections: Int, target: Double, pipeline: Int = 1) {
        closePool()
        let base = currentBase()
        let cpu0 = serverCPU(), pg0 = postgresCPU(), self0 = Proc.selfCPUSeconds()
        let first0 = Proc.cpuSeconds(o.serverPID)
        let p = HTTPPublisher(host: o.host, port: o.port, token: o.publisherToken, event: o.event, base: base)
            .run(.flat(duration: o.duration), connections: connections, pipeline: pipeline)
        let cpu = serverCPU() - cpu0, pg = postgresCPU() - pg0, client = Proc.selfCPUSeconds() - self0
        let key = pipeline > 1 ? "sendrate-pipelined" : connections == 1 ? "sendrate1" : "sendrate"
        noteSendCost(key, p, serverCPU: cpu, firstServerCPU: Proc.cpuSeconds(o.serverPID) - first0, postgresCPU: pg)
        noteAcks(p, base: base)
        let rate = p.ackRate
        let problems = publisherProblems(p)
        log("  \(grouped(p.sent)) POSTs, \(grouped(p.acked)) committed (201) in \(d(Double(p.lastAckNs - p.firstSendNs) / 1e9, 2)) s: "
            + "\(d(rate, 0)) /s; answer p50 \(ms(p.sendToAck.percentileMs(0.5))) p99 \(ms(p.sendToAck.percentileMs(0.99))) max \(ms(p.sendToAck.maxMs)); "
            + "CPU: server \(d(cpu, 2)) s, PostgreSQL \(d(pg, 2)) s, bench client \(d(client, 2)) s"
            + (problems.isEmpty ? "" : "\n  problems: " + problems))
        let who = pipeline > 1 ? "one HTTP connection, \(pipeline) POSTs pipelined"
            : connections == 1 ? "one HTTP publisher, one request at a time" : "\(connections) keep-alive HTTP clients, one POST at a time each"
        var notes = "p50 \(ms(p.sendToAck.percentileMs(0.5))), p99 \(ms(p.sendToAck.percentileMs(0.99))), max \(ms(p.sendToAck.maxMs)) (HTTP answer); "
            + "\(grouped(p.acked)) committed of \(grouped(p.sent)) sent over \(num(o.duration)) s; no subscribers; "
            + "CPU server \(d(cpu, 2)) s, PostgreSQL \(d(pg, 2)) s, bench \(d(client, 2)) s"
        if !problems.isEmpty { notes += "; " + problems }
        rows.append(Row(scenario: "sends committed per second, \(who)", measured: "\(grouped(Int(rate))) /s",
                        target: "≥ \(grouped(Int(target))) /s", met: rate >= target && p.errors.isEmpty && p.unanswered == 0, notes: notes))
    }

    /// One organiser WebSocket sending as fast as acknowledgements allow (`WS_WINDOW` in flight),
    /// for DURATION s, no subscribers: sends committed per second and send → `sent` time.
    func sendrateWebSocket() {
        closePool()
        let base = currentBase()
        let cpu0 = serverCPU(), pg0 = postgresCPU()
        let first0 = Proc.cpuSeconds(o.serverPID)
        let p = WebSocketPublisher(host: o.host, port: o.port, token: o.publisherToken, event: o.event, base: base)
            .run(.flat(duration: o.duration), window: o.wsWindow)
        let cpu = serverCPU() - cpu0, pg = postgresCPU() - pg0
        noteSendCost("sendrate_ws", p, serverCPU: cpu, firstServerCPU: Proc.cpuSeconds(o.serverPID) - first0, postgresCPU: pg)
        noteAcks(p, base: base)
        let problems = publisherProblems(p)
        log("  \(grouped(p.acked)) sends committed: \(d(p.ackRate, 0)) /s; send→sent p50 \(ms(p.sendToAck.percentileMs(0.5))) "
            + "p99 \(ms(p.sendToAck.percentileMs(0.99))); CPU: server \(d(cpu, 2)) s, PostgreSQL \(d(pg, 2)) s"
            + (problems.isEmpty ? "" : "\n  problems: " + problems))
        var notes = "\(o.wsWindow) in flight; send → sent p50 \(ms(p.sendToAck.percentileMs(0.5))), p99 \(ms(p.sendToAck.percentileMs(0.99))); "
            + "no subscribers; CPU server \(d(cpu, 2)) s, PostgreSQL \(d(pg, 2)) s"
        if !problems.isEmpty { notes += "; " + problems }
        rows.append(Row(scenario: "sends committed per second, one WebSocket sender", measured: "\(grouped(Int(p.ackRate))) /s",
                        target: "—", met: nil, notes: notes))
    }

    /// A client away for a long, busy shift: CATCHUP_MESSAGES are published (HTTP, pipelined),
    /// then it subscribes with the `since_seq` it had and pages with `history` + `after_seq`
    /// until `more` is false. Every one must arrive once, in seq order.
    func catchup() {
        closePool()
        let n = o.catchupMessages
        let base = currentBase()
        let p = HTTPPublisher(host: o.host, port: o.port, token: o.publisherToken, event: o.event, base: base)
            .run(.count(n), connections: o.httpConnections, pipeline: o.httpPipeline)
        noteAcks(p, base: base)
        log("  published \(grouped(p.acked)) of \(grouped(n)) in \(d(Double(p.lastAckNs - p.firstSendNs) / 1e9, 1)) s")
        let through = currentBase()
        let cpu0 = serverCPU(), pg0 = postgresCPU()
        let result = CatchUpClient(host: o.host, port: o.port, token: o.subscriberToken, event: o.event).run(sinceSeq: base)
        let cpu = serverCPU() - cpu0, pg = postgresCPU() - pg0
        switch result {
        case .failure(let e):
            log("  \(e)")
            rows.append(Row(scenario: "catch-up of \(grouped(n)) missed messages", measured: "—", target: "all, once", met: false,
                            notes: "\(e)"))
        case .success(let c):
            let distinct = Set(c.seqs).count
            let ordered = zip(c.seqs, c.seqs.dropFirst()).allSatisfy { $0 < $1 }
            // Every message published to the event after the cursor (seqs are shared by all
            // events, so they are counted, not subtracted), each once, in seq order.
            let expected = p.acked
            let exact = distinct == c.seqs.count && ordered && c.seqs.count == expected && c.seqs.allSatisfy { $0 > base && $0 <= through }
            log("  \(grouped(c.seqs.count)) messages in \(c.pages) pages, \(d(c.seconds, 2)) s; expected \(grouped(expected)); "
                + "\(c.seqs.count - distinct) duplicates; in order: \(ordered); CPU: server \(d(cpu, 2)) s, PostgreSQL \(d(pg, 2)) s")
            rows.append(Row(scenario: "catch-up of \(grouped(n)) missed messages (subscribe since_seq + history pages)",
                            measured: fmt("%.2f s", c.seconds), target: "all, once, in order", met: exact,
                            notes: "\(grouped(c.seqs.count)) of \(grouped(expected)) received in \(c.pages) pages, "
                                + "\(c.seqs.count - distinct) duplicates, \(ordered ? "in seq order" : "OUT OF ORDER"); "
                                + "CPU server \(d(cpu, 2)) s, PostgreSQL \(d(pg, 2)) s"))
        }
    }

    /// POSTs paced at SENDRATE_PACED_RATE over SENDRATE_CONNECTIONS connections (one at a time
    /// each): p99 of the answer time.
    func sendratePaced() {
        closePool()
        let rate = o.sendratePacedRate
        let base = currentBase()
        let cpu0 = serverCPU(), pg0 = postgresCPU()
        let p = HTTPPublisher(host: o.host, port: o.port, token: o.publisherToken, event: o.event, base: base)
            .run(.paced(rate: rate, duration: o.duration), connections: o.sendrateConnections, pipeline: 1)
        let cpu = serverCPU() - cpu0, pg = postgresCPU() - pg0
        noteAcks(p, base: base)
        let planned = max(1, Int(rate * o.duration))
        let p99 = p.sendToAck.percentileMs(0.99)
        let problems = publisherProblems(p)
        log("  \(grouped(p.acked))/\(grouped(planned)) committed, \(d(p.ackRate, 0)) /s; answer p50 \(ms(p.sendToAck.percentileMs(0.5))) "
            + "p99 \(ms(p99)) max \(ms(p.sendToAck.maxMs)); \(p.lateSends) sends > 5 ms late, held back \(p.heldBack)×; "
            + "CPU: server \(d(cpu, 2)) s, PostgreSQL \(d(pg, 2)) s" + (problems.isEmpty ? "" : "\n  problems: " + problems))
        var notes = "p50 \(ms(p.sendToAck.percentileMs(0.5))), max \(ms(p.sendToAck.maxMs)); \(grouped(p.acked))/\(grouped(planned)) committed "
            + "(\(d(p.ackRate, 0)) /s) over \(o.sendrateConnections) connections; no subscribers"
        if p.heldBack > 0 { notes += "; every connection busy \(p.heldBack)× (held back)" }
        if p.lateSends > 0 { notes += "; \(p.lateSends) sends > 5 ms late (bench thread)" }
        if !problems.isEmpty { notes += "; " + problems }
        rows.append(Row(scenario: "HTTP send → 201 at a paced \(grouped(Int(rate))) /s: p99", measured: ms(p99), target: "≤ 10 ms",
                        met: (p99 ?? .infinity) <= 10 && p.acked == planned && p.errors.isEmpty, notes: notes))
    }

    func publisherProblems(_ p: PublishResult) -> String {
        var t: [String] = []
        if !p.errors.isEmpty {
            t.append("errors " + p.errors.sorted { $0.value > $1.value }.map { "\($0.value)× \($0.key)" }.joined(separator: ", ")
                     + (p.errorSample.map { " (first: \($0.prefix(160)))" } ?? ""))
        }
        if p.unanswered > 0 { t.append("\(p.unanswered) requests unanswered") }
        if p.reconnects > 0 { t.append("\(p.reconnects) HTTP reconnects") }
        if let f = p.failure { t.append("publisher: \(f)") }
        return t.joined(separator: "; ")
    }
}
