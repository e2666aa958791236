import CBenchEpoll
import Foundation
import Glibc

/// Runs the scenarios against one server and prints the table.
final class Bench {
    let o: Options
    let loops: [SubscriberLoop]
    var poolSize = 0
    var poolOpen: OpenSummary?
    var knownMaxSeq: Int64 = 0
    var rows: [Row] = []
    /// The comparison rows' figures (`--results-file`, Bench+Peers.swift), by key.
    var results: [String: Double] = [:]
    var resultNotes: [String: String] = [:]
    /// flatout-bounded: the publisher may send message i only while i < the slowest
    /// subscriber's progress + this (nil: no bound).
    var boundAhead: Int?

    init(_ o: Options) {
        self.o = o
        // three-servers: the subscribers spread over the servers' ports.
        let ports = o.subscriberPorts.isEmpty ? [o.port] : o.subscriberPorts
        loops = (0..<max(1, o.readers)).map { _ in SubscriberLoop(host: o.host, ports: ports, token: o.subscriberToken, target: o.target) }
        loops.forEach { $0.subscribeInURL = o.subscribeInURL; $0.start() }
    }

    @discardableResult
    func eachLoop<T>(_ body: (SubscriberLoop) -> T) -> [T] {
        loops.map { l in
            l.lock.lock()
            defer { l.lock.unlock() }
            return body(l)
        }
    }

    var serverAlive: Bool { o.serverPID == 0 || Proc.alive(o.serverPID) }
    /// utime + stime of every server process (nginx: master and workers).
    func serverCPU() -> Double { o.serverPIDs.count > 1 ? o.serverPIDs.reduce(0) { $0 + Proc.cpuSeconds($1) } : Proc.cpuSeconds(o.serverPID) }
    /// One process: VmRSS (as always); several (nginx): the sum of their Pss, so pages they
    /// share (nchan's shared memory) count once.
    func serverMemoryKiB() -> Int { o.serverPIDs.count > 1 ? o.serverPIDs.reduce(0) { $0 + Proc.pssKiB($1) } : Proc.rssKiB(o.serverPID) }
    func postgresCPU() -> Double { Proc.treeCPUSeconds(o.postgresPID) }

    // MARK: server facts over HTTP

    /// The event's highest seq: the newest message over the HTTP API, or the highest acknowledged
    /// (of the main event; 0 for another).
    func currentBase(event: String? = nil) -> Int64 {
        guard o.target == .staffcast else { return 0 } // the peers' index is the publisher's n
        let event = event ?? o.event
        var seq = event == o.event ? knownMaxSeq : 0
        if let r = Net.get(host: o.host, port: o.port, path: "/v1/events/\(event)/messages?limit=1", token: o.publisherToken),
           r.status == 200 {
            let bytes = Array(r.body.utf8)
            if let s = bytes.withUnsafeBufferPointer({ integer(after: Needles.seq, in: $0.baseAddress!, $0.count) }) { seq = max(seq, s) }
        } else {
            log("  (could not read the newest message over HTTP; using the highest acknowledged seq \(seq))")
        }
        return seq
    }

    /// WebSockets open on the server (GET /v1/status with the ops token), nil when unknown.
    func serverConnections() -> Int? {
        guard o.target == .staffcast, !o.opsToken.isEmpty,
              let r = Net.get(host: o.host, port: o.port, path: "/v1/status", token: o.opsToken), r.status == 200 else { return nil }
        let bytes = Array(r.body.utf8)
        return bytes.withUnsafeBufferPointer { buf -> Int? in
            let needle = Needle(#""connections":"#)
            defer { free(needle.pointer) }
            return integer(after: needle, in: buf.baseAddress!, buf.count).map(Int.init)
        }
    }

    // MARK: subscriber pools

    func closePool() {
        let had = eachLoop { $0.live }.reduce(0, +)
        eachLoop { $0.closeAll() }
        poolSize = 0
        poolOpen = nil
        guard had > 0 else { return }
        let deadline = monoNs() + 30_000_000_000
        var n = serverConnections()
        while let c = n, c > 0, monoNs() < deadline, serverAlive {
            usleep(50_000)
            n = serverConnections()
        }
        if let c = n, c > 0 { log("  note: the server still counts \(c) connections 30 s after the bench closed its \(had)") }
        if n == nil { sleep(2) }
    }

    /// Connects and subscribes `n` fresh subscribers, at most `window` handshakes at once; with
    /// `tokens` (at least `n`), each connection upgrades with its own.
    @discardableResult
    func openPool(_ n: Int, window: Int, tokens: [String] = [], event: String? = nil) -> OpenSummary {
        let event = event ?? o.event
        closePool()
        var s = OpenSummary()
        s.requested = n
        let since = currentBase(event: event)
        s.rssBeforeKiB = serverMemoryKiB()
        let cpu0 = serverCPU(), pg0 = postgresCPU(), self0 = Proc.selfCPUSeconds()
        let per = max(1, window / loops.count)
        var offset = 0
        for (i, l) in loops.enumerated() {
            let share = n / loops.count + (i < n % loops.count ? 1 : 0)
            let mine = tokens.count >= offset + share ? Array(tokens[offset..<offset + share]) : []
            offset += share
            l.lock.lock()
            l.beginOpening(share, event: event, sinceSeq: since, window: per, tokens: mine)
            l.lock.unlock()
        }
        let start = monoNs()
        var lastLog = start
        while true {
            let (sub, failed) = eachLoop { ($0.open.subscribed, $0.open.failed) }.reduce((0, 0)) { ($0.0 + $1.0, $0.1 + $1.1) }
            let now = monoNs()
            if sub + failed >= n { break }
            if !serverAlive { log("  the server process is gone"); break }
            if Double(now - start) / 1e9 > o.connectTimeout { s.timedOut = true; break }
            if now - lastLog > 5_000_000_000 {
                log("  … \(grouped(sub)) of \(grouped(n)) subscribed after \(d(Double(now - start) / 1e9, 0)) s (\(grouped(failed)) failed)")
                lastLog = now
            }
            usleep(5_000)
        }
        let stats = eachLoop { $0.open }
        s.serverCPU = serverCPU() - cpu0
        s.clientCPU = Proc.selfCPUSeconds() - self0
        s.postgresCPU = postgresCPU() - pg0
        s.subscribed = stats.reduce(0) { $0 + $1.subscribed }
        s.failed = stats.reduce(0) { $0 + $1.failed }
        s.retries = stats.reduce(0) { $0 + $1.subscribeRetries }
        for st in stats { for (k, v) in st.failures { s.failures[k, default: 0] += v } }
        let first = stats.map(\.firstConnectNs).filter { $0 > 0 }.min() ?? 0
        let last = stats.map(\.lastSubscribedNs).max() ?? 0
        if first > 0 && last > first { s.wallSeconds = Double(last - first) / 1e9 }
        if o.serverPID > 0 {
            usleep(UInt32(o.settle * 1e6))
            s.rssAfterKiB = serverMemoryKiB()
        }
        poolSize = n
        poolOpen = s
        log("  connected \(grouped(s.subscribed))/\(grouped(n)) subscribers in \(s.wallSeconds.map { d($0, 3) + " s" } ?? "—") (window \(window))"
            + (s.failed > 0 ? ", \(grouped(s.failed)) failed: \(s.failureText)" : "")
            + (s.timedOut ? ", gave up after \(Int(o.connectTimeout)) s" : "")
            + "; CPU: server \(d(s.serverCPU, 2)) s (\(s.subscribed > 0 ? d(s.serverCPU * 1e6 / Double(s.subscribed), 0) + " µs" : "—") per connect + subscribe), "
            + "PostgreSQL \(d(s.postgresCPU, 2)) s, bench client \(d(s.clientCPU, 2)) s; server VmRSS \(grouped(s.rssBeforeKiB)) → \(grouped(s.rssAfterKiB)) KiB")
        return s
    }

    /// The current pool when it has exactly `n` live subscribers, else a fresh one.
    func ensurePool(_ n: Int) -> OpenSummary {
        if poolSize == n, let p = poolOpen, eachLoop({ $0.subscribedNow }).reduce(0, +) == p.subscribed, p.subscribed > 0 {
            return p
        }
        return openPool(n, window: o.stormWindow)
    }

    // MARK: traffic

    /// Remembers the highest acknowledged seq (the next scenario's base when HTTP cannot tell).
    func noteAcks(_ p: PublishResult, base: Int64) {
        if let top = p.acks.words.indices.last(where: { p.acks.words[$0] != 0 }) {
            let bits = p.acks.words[top]
            knownMaxSeq = max(knownMaxSeq, base + Int64(top * 64 + (63 - bits.leadingZeroBitCount)) + 1)
        }
    }

    func traffic(_ n: Int, _ kind: PublisherKind) -> TrafficSummary {
        var t = TrafficSummary()
        _ = ensurePool(n)
        t.subscribers = eachLoop { $0.subscribedNow }.reduce(0, +)
        let base = currentBase()
        eachLoop { $0.resetTraffic(base: base, track: boundAhead != nil) }
        let stages0 = o.target == .staffcast ? StageBudget.scrape(host: o.host, port: o.port, token: o.opsToken) : nil
        let cpu0 = serverCPU(), pg0 = postgresCPU(), self0 = Proc.selfCPUSeconds()
        // flatout-bounded: the lowest count, over the loops, of messages all its subscribers have.
        let limit: (() -> Int)? = boundAhead.map { ahead in { [loops] in (loops.map { $0.progress.value }.min() ?? 0) + ahead } }
        switch (o.target, kind) {
        case (.nchan, .webSocket(let plan, let window)):
            // nchan's publishing path is HTTP: the same window over HTTP_CONNECTIONS keep-alive
            // connections (nginx answers one connection's pipelined requests one after another).
            let connections = max(1, min(o.httpConnections, window))
            t.publish = HTTPPublisher(host: o.host, port: o.port, token: "", event: "", base: 0, target: .nchan)
                .run(plan, connections: connections, pipeline: max(1, window / connections), limit: limit)
        case (.nats, .webSocket(let plan, let window)):
            t.publish = NATSPublisher(host: o.host, port: o.publisherPort).run(plan, window: window, limit: limit)
        case (_, .webSocket(let plan, let window)):
            t.publish = WebSocketPublisher(host: o.host, port: o.port, token: o.publisherToken, event: o.event, base: base)
                .run(plan, window: window, limit: limit)
        case (.nchan, .http(let plan, let connections, let pipeline)):
            t.publish = HTTPPublisher(host: o.host, port: o.port, token: "", event: "", base: 0, target: .nchan)
                .run(plan, connections: connections, pipeline: pipeline, limit: limit)
        case (.nats, .http(let plan, _, let pipeline)):
            t.publish = NATSPublisher(host: o.host, port: o.publisherPort).run(plan, window: pipeline, limit: limit)
        case (_, .http(let plan, let connections, let pipeline)):
            t.publish = HTTPPublisher(host: o.host, port: o.port, token: o.publisherToken, event: o.event, base: base)
                .run(plan, connections: connections, pipeline: pipeline, limit: limit)
        }
        noteAcks(t.publish, base: base)
        // Wait for the deliveries: every subscriber has every acknowledged message, or no
        // progress for 3 s (some will never come), or 120 s.
        let expected = t.publish.acked * t.subscribers
        var last = -1
        var lastChange = monoNs()
        let start = monoNs()
        while serverAlive {
            let d = eachLoop { $0.traffic.deliveries }.reduce(0, +)
            let now = monoNs()
            if d >= expected { t.complete = true; break }
            if d != last { last = d; lastChange = now }
            if now - lastChange > 3_000_000_000 || now - start > 120_000_000_000 { break }
            usleep(10_000)
        }
        t.serverCPU = serverCPU() - cpu0
        t.postgresCPU = postgresCPU() - pg0
        t.clientCPU = Proc.selfCPUSeconds() - self0
        for l in loops {
            l.lock.lock()
            let s = l.traffic
            t.deliveries += s.deliveries
            for (i, v) in s.perServer.enumerated() {
                if t.perServer.count <= i { t.perServer.append(0) }
                t.perServer[i] += v
            }
            t.duplicates += s.duplicates
            t.stale += s.stale
            t.pings += s.pings
            t.lastDeliveryNs = max(t.lastDeliveryNs, s.lastDeliveryNs)
            for (k, v) in s.closedByServer { t.closedByServer[k, default: 0] += v }
            for (k, v) in s.errors { t.errors[k, default: 0] += v }
            t.sendToReceipt.merge(s.sendToReceipt)
            t.commitToReceipt.merge(s.commitToReceipt)
            let loss = l.losses(acked: t.publish.acks)
            t.lost += loss.lost
            t.lostOnClosed += loss.lostOnClosed
            t.missedSubscribers += loss.missedSubscribers
            t.unackedReceived += loss.unacked
            l.lock.unlock()
        }
        if t.complete && t.lost + t.lostOnClosed > 0 { t.complete = false }
        let p = t.publish
        log("  publisher: \(grouped(p.sent)) sent, \(grouped(p.acked)) acknowledged, sending for \(d(p.sendSeconds, 2)) s "
            + "(\(d(p.ackRate)) msg/s acknowledged); send→ack p50 \(ms(p.sendToAck.percentileMs(0.5))) p99 \(ms(p.sendToAck.percentileMs(0.99)))")
        log("  subscribers: \(grouped(t.subscribers)) × \(grouped(p.acked)) → \(grouped(t.deliveries)) deliveries "
            + "(\(grouped(Int(t.deliveriesPerSecond)))/s); \(t.lossText); \(t.pings) pings answered")
        log("  latency send→receipt p50 \(ms(t.sendToReceipt.percentileMs(0.5))) p99 \(ms(t.sendToReceipt.percentileMs(0.99))) "
            + "max \(ms(t.sendToReceipt.maxMs)); commit→receipt (sent_at, ms) p50 \(ms(t.commitToReceipt.percentileMs(0.5))) "
            + "p99 \(ms(t.commitToReceipt.percentileMs(0.99))) max \(ms(t.commitToReceipt.maxMs))")
        if o.target == .staffcast, let stages = StageBudget.scrape(host: o.host, port: o.port, token: o.opsToken)?.since(stages0) {
            log("  server stages, commit to first byte (sampled WebSocket sends): " + stages.text)
            log("  sharing: " + stages.sharingText)
        }
        log("  CPU: server \(d(t.serverCPU, 2)) s (\(t.deliveries > 0 ? d(t.serverCPU * 1e6 / Double(t.deliveries), 2) + " µs" : "—") per delivery), "
            + "PostgreSQL \(d(t.postgresCPU, 2)) s, bench client \(d(t.clientCPU, 2)) s"
            + (t.publisherProblems.isEmpty ? "" : "\n  problems: " + t.publisherProblems))
        return t
    }

    // For the soak (Bench+Soak.swift): its subscribers, one paced minute, its row.
    func openSoakPool(_ n: Int) -> Int { ensurePool(n).subscribed }
    func soakMinute(_ n: Int, rate: Double) -> TrafficSummary {
        traffic(n, .webSocket(.paced(rate: rate, duration: 60), window: o.paceWindow))
    }
    func addRow(_ row: Row) { rows.append(row) }

    // MARK: scenarios

    func run() {
        log("staffcast-bench: \(o.target.title) \(o.host):\(o.port) (pid \(o.serverPIDs.map(String.init).joined(separator: ","))), \(loops.count) subscriber threads, scenarios: \(o.scenarios.joined(separator: " "))")
        for name in o.scenarios {
            guard serverAlive else {
                rows.append(Row(scenario: name, measured: "—", target: "", met: false, notes: "not run: the server process exited"))
                continue
            }
            guard o.target != .staffcast || Net.get(host: o.host, port: o.port, path: "/healthz", token: nil)?.status == 200 else {
                log("== \(name): not run, the server does not answer GET /healthz")
                rows.append(Row(scenario: name, measured: "—", target: "", met: false,
                                notes: "not run: the server (alive) did not answer GET /healthz within 10 s"))
                continue
            }
            log("== \(name)")
            switch name {
            case "storm": storm()
            case "memory": memory()
            case "latency1k":
                latency("\(grouped(o.latency1kSubscribers)) subscribers, \(num(o.latency1kRate)) msg/s: p99 send→receipt",
                        o.latency1kSubscribers, o.latency1kRate, targetMs: 8, key: "latency1k")
            case "latency10k":
                latency("\(grouped(o.latency10kSubscribers)) subscribers, \(num(o.latency10kRate)) msg/s: p99 send→receipt",
                        o.latency10kSubscribers, o.latency10kRate, targetMs: 40, key: "latency10k")
            case "flatout-http": flatout(http: true)
            case "readstorm": for n in o.readstormN { readstorm(n) }
            case "answerstorm": for n in o.readstormN { readstorm(n, answering: true) }
            case "sendrate": sendrate(connections: o.sendrateConnections, target: 20_000)
            case "sendrate1": sendrate(connections: 1, target: 1_000)
            case "sendrate-pipelined": sendrate(connections: 1, target: 10_000, pipeline: o.httpPipeline)
            case "sendrate-paced": sendratePaced()
            case "catchup": catchup()
            case "sendrate-ws": sendrateWebSocket()
            case "flatout-ws": flatout(http: false)
            case "soak": soak()
            case "storm-live": stormLive()
            case "flatout-bounded": flatoutBounded()
            case "three-servers": threeServers()
            case "custom":
                for n in o.customSubscribers {
                    latency("\(grouped(n)) subscribers, \(num(o.customRate)) msg/s: p99 send→receipt", n, o.customRate, targetMs: nil)
                }
            default: break
            }
        }
        closePool()
        loops.forEach { $0.stop() }
        if !serverAlive { log("!! the server process (pid \(o.serverPID)) is gone") }
        printTable()
        writeResults()
    }

    // MARK: the table

    func printTable() {
        let header = ["scenario", "measured", "target", "met", "notes"]
        let body = rows.map { [$0.scenario, $0.measured, $0.target, $0.met.map { $0 ? "yes" : "no" } ?? "—", $0.notes] }
        var widths = header.map { $0.count }
        for r in body { for (i, c) in r.enumerated() where i < 4 { widths[i] = max(widths[i], c.count) } }
        func line(_ cells: [String]) -> String {
            "| " + cells.enumerated().map { i, c in i < 4 ? c.padding(toLength: widths[i], withPad: " ", startingAt: 0) : c }
                .joined(separator: " | ") + " |"
        }
        log("")
        log("Latency is publisher send → subscriber receipt (monotonic clock in the message text, µs precision): it")
        log("contains the insert and commit, so it bounds commit → receipt from above; commit → receipt from sent_at")
        log("(PostgreSQL's transaction start, ms on the wire) is in the notes. Lost = acknowledged but not received.")
        log("")
        log(line(header))
        log("|" + widths.enumerated().map { i, w in String(repeating: "-", count: (i < 4 ? w : 5) + 2) }.joined(separator: "|") + "|")
        for r in body { log(line(r)) }
    }
}

func ms(_ v: Double?) -> String {
    guard let v else { return "—" }
    return v < 10 ? fmt("%.2f ms", v) : v < 1_000 ? fmt("%.1f ms", v) : fmt("%.2f s", v / 1_000)
}

func d(_ v: Double, _ digits: Int = 1) -> String { String(format: "%.\(digits)f", v) }

func num(_ v: Double) -> String { v == v.rounded() ? String(Int(v)) : String(v) }
