import Foundation

/// The side-by-side table of issue 21 (bench/peers.sh): the results files of one run against
/// each server (`--results-file`), one column each, and staffcast's ratio to the best peer.
struct Comparison {
    /// One row: the figure's key in the results files, how to print it, and which way is better.
    private struct Line {
        let title: String
        let keys: [String]
        let unit: String
        let higherIsBetter: Bool
        let note: String
    }

    /// The rows, titled with the settings of the first results file (`set.*`).
    private func lines() -> [Line] {
        let set = columns.first?.1 ?? [:]
        func n(_ key: String, _ fallback: Double) -> String { grouped(Int(set["set." + key] ?? fallback)) }
        func r(_ key: String, _ fallback: Double) -> String { num(set["set." + key] ?? fallback) }
        return [
            Line(title: "\(n("latency1k.n", 1_000)) subscribers, \(r("latency1k.rate", 50)) msg/s: p50 / p99 publish→receipt", keys: ["latency1k.p50_ms", "latency1k.p99_ms"], unit: "ms", higherIsBetter: false, note: "latency1k"),
            Line(title: "\(n("latency10k.n", 10_000)) subscribers, \(r("latency10k.rate", 10)) msg/s: p50 / p99", keys: ["latency10k.p50_ms", "latency10k.p99_ms"], unit: "ms", higherIsBetter: false, note: "latency10k"),
            Line(title: "\(n("storm.n", 10_000)) connect + subscribe (reconnect storm)", keys: ["storm.wall_s"], unit: "s", higherIsBetter: false, note: "storm"),
            Line(title: "server CPU per connect + subscribe", keys: ["storm.cpu_us"], unit: "µs", higherIsBetter: false, note: "storm"),
            Line(title: "server CPU per delivery, \(n("latency10k.n", 10_000)) subscribers", keys: ["latency10k.cpu_per_delivery_us"], unit: "µs", higherIsBetter: false, note: "latency10k"),
            Line(title: "\(n("flatout.n", 1_000)) subscribers flat out (\(n("flatout.window", 16)) in flight, ≤ \(n("flatout.ahead", 1_000)) ahead of the slowest): deliveries/s", keys: ["flatout.rate"], unit: "/s", higherIsBetter: true, note: "flatout"),
            Line(title: "the same: p50 publish→receipt", keys: ["flatout.p50_ms"], unit: "ms", higherIsBetter: false, note: "flatout"),
            Line(title: "idle memory per connection (memory growth / connections)", keys: ["memory.kib"], unit: "KiB", higherIsBetter: false, note: "memory"),
        ]
    }

    private var columns: [(Target, [String: Double], [String: String])] = []

    init(_ files: [(Target, String)]) throws {
        for (target, path) in files {
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { throw BenchFailure("cannot read results file \(path)") }
            var values: [String: Double] = [:], notes: [String: String] = [:]
            for line in text.split(separator: "\n") {
                let kv = line.split(separator: "\t", maxSplits: 1).map(String.init)
                guard kv.count == 2 else { continue }
                if kv[0].hasPrefix("note:") { notes[String(kv[0].dropFirst(5))] = kv[1] } else if let v = Double(kv[1]) { values[kv[0]] = v }
            }
            columns.append((target, values, notes))
        }
        // Peers first, staffcast last, as in issue 21.
        columns.sort { ($0.0 == .staffcast ? 1 : 0, $0.0.rawValue) < ($1.0 == .staffcast ? 1 : 0, $1.0.rawValue) }
    }

    private static func show(_ v: Double, _ unit: String) -> String {
        switch unit {
        case "/s": return v >= 1e6 ? fmt("%.2f M", v / 1e6) : grouped(Int(v.rounded()))
        case "s": return fmt("%.2f", v)
        case "KiB": return fmt("%.1f", v)
        default: return v >= 100 ? grouped(Int(v.rounded())) : v >= 10 ? fmt("%.1f", v) : fmt("%.2f", v)
        }
    }

    /// "1.5× slower", "best", … for each figure of the row (lower or higher is better).
    private static func ratio(_ mine: Double, _ best: Double, higherIsBetter: Bool, more: String) -> String {
        guard mine > 0, best > 0 else { return "—" }
        let r = higherIsBetter ? best / mine : mine / best
        if r <= 1 { return r > 0.995 ? "equal best" : fmt("best (%.1f× better)", 1 / r) }
        return fmt("%.1f× ", r) + more
    }

    func print() {
        let names = columns.map { $0.0.title }
        log("")
        log("Side by side, each server alone with the same load generator and scenarios (bench/README.md: Peers).")
        log("staffcast is DURABLE: it acknowledges a message only after PostgreSQL committed it (fsync on), and every")
        log("figure includes that commit. NATS (core, no JetStream) and nchan (memory store) are NOT durable: a message")
        log("they acknowledged is lost when they stop.")
        log("")
        let settingKeys = Set(columns.flatMap { $0.1.keys.filter { $0.hasPrefix("set.") } })
        let differ = settingKeys.filter { k in Set(columns.compactMap { $0.1[k] }).count > 1 }.sorted()
        if !differ.isEmpty { log("!! the runs used different settings (\(differ.joined(separator: ", "))): the rows do not compare") }
        var table = [["scenario"] + names + ["staffcast vs best peer"]]
        for line in lines() {
            var cells = [line.title]
            for (_, values, notes) in columns {
                let figures = line.keys.map { values[$0].map { Comparison.show($0, line.unit) } ?? "—" }
                var cell = figures.joined(separator: " / ") + (figures.allSatisfy { $0 == "—" } ? "" : " " + line.unit)
                if let n = notes[line.note] { cell += " (\(n))" }
                cells.append(cell)
            }
            let mine = columns.first { $0.0 == .staffcast }?.1
            let peers = columns.filter { $0.0 != .staffcast }.map { $0.1 }
            let more = line.unit == "/s" ? "fewer" : line.unit == "µs" || line.unit == "KiB" ? "more" : "slower"
            let ratios = line.keys.map { key -> String in
                guard let m = mine?[key] else { return "—" }
                let others = peers.compactMap { $0[key] }
                guard let best = line.higherIsBetter ? others.max() : others.min() else { return "— (no peer)" }
                return Comparison.ratio(m, best, higherIsBetter: line.higherIsBetter, more: more)
            }
            cells.append(ratios.count > 1 && Set(ratios).count == 1 ? ratios[0] : ratios.joined(separator: " / "))
            table.append(cells)
        }
        var widths = table[0].map { _ in 0 }
        for r in table { for (i, c) in r.enumerated() { widths[i] = max(widths[i], c.count) } }
        for (k, r) in table.enumerated() {
            log("| " + r.enumerated().map { $0.element.padding(toLength: widths[$0.offset], withPad: " ", startingAt: 0) }.joined(separator: " | ") + " |")
            if k == 0 { log("|" + widths.map { String(repeating: "-", count: $0 + 2) }.joined(separator: "|") + "|") }
        }
    }
}
