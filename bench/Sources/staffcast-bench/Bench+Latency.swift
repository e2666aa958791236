import Foundation

/// Paced fan-out latency (`latency1k`, `latency10k`, `custom`) and the flat-out rows (`flatout-http`, `flatout-ws`).
extension Bench {
    func latency(_ title: String, _ n: Int, _ rate: Double, targetMs: Double?, key: String? = nil) {
        let t = traffic(n, .webSocket(.paced(rate: rate, duration: o.duration), window: o.paceWindow))
        let p = t.publish
        let planned = max(1, Int(rate * o.duration))
        let p99 = t.sendToReceipt.percentileMs(0.99)
        let sendRate = p.sendSeconds > 0 ? Double(p.sent - 1) / p.sendSeconds : 0
        // Held back = by the server: the in-flight window full, or acknowledgements lagging. Late
        // sends (the bench's own thread starved of CPU) are reported but are not the server's doing.
        let heldBack = p.heldBack > 0 || p.acked < planned || p.ackRate < 0.95 * rate
        var notes = "p50 \(ms(t.sendToReceipt.percentileMs(0.5))), max \(ms(t.sendToReceipt.maxMs)); "
        notes += "commit→receipt p99 \(ms(t.commitToReceipt.percentileMs(0.99))) (ms clock); "
        notes += "\(t.lossText); "
        notes += "publisher \(grouped(p.acked))/\(grouped(planned)) acked, sending \(d(sendRate)) msg/s, acks \(d(p.ackRate)) msg/s"
        if p.heldBack > 0 { notes += ", window full \(p.heldBack)×" }
        if p.lateSends > 0 { notes += ", \(p.lateSends) sends > 5 ms late (bench thread)" }
        notes += ", send→ack p99 \(ms(p.sendToAck.percentileMs(0.99)))"
        notes += "; \(grouped(t.subscribers)) subscribers"
        if t.subscribers < n { notes += " of \(grouped(n)) wanted" }
        if !t.publisherProblems.isEmpty { notes += "; " + t.publisherProblems }
        let met: Bool? = targetMs.map { target in
            (p99 ?? .infinity) <= target && t.lost + t.lostOnClosed == 0 && t.duplicates == 0 && !heldBack && t.subscribers == n
        }
        if heldBack { notes += "; publisher held back (acks slower than the schedule)" }
        if let key {
            results[key + ".p50_ms"] = t.sendToReceipt.percentileMs(0.5)
            results[key + ".p99_ms"] = p99
            if t.deliveries > 0 { results[key + ".cpu_per_delivery_us"] = t.serverCPU * 1e6 / Double(t.deliveries) }
            let problems = [t.lost + t.lostOnClosed > 0 ? "lost \(grouped(t.lost + t.lostOnClosed))" : nil,
                            t.duplicates > 0 ? "dup \(grouped(t.duplicates))" : nil, heldBack ? "publisher held back" : nil,
                            t.subscribers < n ? "\(grouped(t.subscribers)) subscribers" : nil].compactMap { $0 }
            if !problems.isEmpty { resultNotes[key] = problems.joined(separator: ", ") }
        }
        rows.append(Row(scenario: title, measured: p99.map { $0 < 100 ? fmt("%.2f ms", $0) : "\(grouped(Int($0.rounded()))) ms" } ?? "—",
                        target: targetMs.map { "≤ \(num($0)) ms" } ?? "—", met: met, notes: notes))
    }

    func flatout(http: Bool) {
        let n = o.flatoutSubscribers
        let kind: PublisherKind = http
            ? .http(.flat(duration: o.flatoutDuration), connections: o.httpConnections, pipeline: o.httpPipeline)
            : .webSocket(.flat(duration: o.flatoutDuration), window: o.wsWindow)
        let how = http ? "HTTP publisher, \(o.httpConnections) keep-alive connections × \(o.httpPipeline) pipelined"
                       : "WebSocket publisher, \(o.wsWindow) sends in flight"
        let t = traffic(n, kind)
        let rate = t.deliveriesPerSecond
        let p = t.publish
        var notes = "\(grouped(p.acked)) msgs acked (\(d(p.ackRate, 0)) msg/s) → \(grouped(t.deliveries)) deliveries; \(t.lossText); "
            + "send→receipt p99 \(ms(t.sendToReceipt.percentileMs(0.99)))"
        if t.subscribers < n { notes += "; \(grouped(t.subscribers)) of \(grouped(n)) subscribers" }
        if !t.publisherProblems.isEmpty { notes += "; " + t.publisherProblems }
        rows.append(Row(scenario: "\(grouped(n)) subscribers flat out, \(how): deliveries/s",
                        measured: "\(grouped(Int(rate))) /s", target: "≥ 2,400,000 /s",
                        met: rate >= 2_400_000 && t.lost + t.lostOnClosed == 0 && t.duplicates == 0, notes: notes))
        let perDelivery = t.deliveries > 0 ? t.serverCPU * 1e6 / Double(t.deliveries) : nil
        rows.append(Row(scenario: "server CPU per delivery (flat out, \(http ? "HTTP" : "WebSocket") publisher)",
                        measured: perDelivery.map { fmt("%.2f µs", $0) } ?? "—", target: "≤ 2 µs",
                        met: perDelivery.map { $0 <= 2 },
                        notes: "server utime+stime \(d(t.serverCPU, 2)) s / \(grouped(t.deliveries)) deliveries; "
                            + "PostgreSQL \(d(t.postgresCPU, 2)) s; bench client \(d(t.clientCPU, 2)) s"))
    }

    // MARK: the durable path (issue 8)
}
