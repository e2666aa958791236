import Foundation

/// The server's per-stage budget of a sample of sends: `staffcast_stage_seconds{stage=…}`
/// from `GET /metrics` (the server traces at most one WebSocket send per 5 ms through every
/// stage, `MessageTracer`), as the difference of two scrapes around a scenario, with p50 and
/// p99 read from the histogram's buckets (linear within a bucket, as Prometheus does).
struct StageBudget {
    /// The server's stages in the order a message passes them.
    static let order = ["parse", "queue", "commit", "wakeup", "read", "encode", "handoff", "fanout", "first_write", "last_write", "answer"]

    /// Cumulative bucket counts by stage, ascending `le` (+Inf last).
    var buckets: [String: [(le: Double, count: Double)]] = [:]

    /// Counters that say how well work is shared: frames per socket write, sends per commit,
    /// messages per listener read.
    static let sharing = ["staffcast_deliveries_total", "staffcast_socket_writes_total", "staffcast_send_batch_size_sum",
                          "staffcast_send_batch_size_count", "staffcast_listener_batches_total"]
    var counters: [String: Double] = [:]

    /// nil when the server does not answer or has no stage histogram (an older server).
    static func scrape(host: String, port: Int, token: String) -> StageBudget? {
        guard let r = Net.get(host: host, port: port, path: "/metrics", token: token.isEmpty ? nil : token), r.status == 200 else { return nil }
        var b = StageBudget()
        for line in r.body.split(separator: "\n") {
            let fields = line.split(separator: " ")
            if fields.count == 2, Self.sharing.contains(String(fields[0])), let v = Double(fields[1]) { b.counters[String(fields[0])] = v }
        }
        for line in r.body.split(separator: "\n") where line.hasPrefix("staffcast_stage_seconds_bucket{") {
            guard let open = line.firstIndex(of: "{"), let close = line.lastIndex(of: "}") else { continue }
            var stage: String?, le: Double?
            for pair in line[line.index(after: open)..<close].split(separator: ",") {
                let kv = pair.split(separator: "=", maxSplits: 1)
                guard kv.count == 2 else { continue }
                let value = kv[1].trimmingCharacters(in: CharacterSet(charactersIn: "\""))
                if kv[0] == "stage" { stage = value }
                if kv[0] == "le" { le = value == "+Inf" ? .infinity : Double(value) }
            }
            guard let stage, let le, let count = Double(line[line.index(after: close)...].trimmingCharacters(in: .whitespaces)) else { continue }
            b.buckets[stage, default: []].append((le, count))
        }
        for k in b.buckets.keys { b.buckets[k]?.sort { $0.le < $1.le } }
        return b.buckets.isEmpty ? nil : b
    }

    /// What was recorded after `earlier`.
    func since(_ earlier: StageBudget?) -> StageBudget {
        guard let earlier else { return self }
        var out = StageBudget()
        for (name, value) in counters { out.counters[name] = value - (earlier.counters[name] ?? 0) }
        for (stage, list) in buckets {
            let before = earlier.buckets[stage] ?? []
            out.buckets[stage] = list.map { b in (b.le, b.count - (before.first { $0.le == b.le }?.count ?? 0)) }
        }
        return out
    }

    func count(_ stage: String) -> Int { Int(buckets[stage]?.last?.count ?? 0) }

    /// The q-quantile of a stage in seconds (nil without observations).
    func quantile(_ stage: String, _ q: Double) -> Double? {
        guard let list = buckets[stage], let total = list.last?.count, total > 0 else { return nil }
        let rank = q * total
        var lower = 0.0, below = 0.0
        for b in list {
            if b.count >= rank {
                if b.le.isInfinite { return lower }
                let inBucket = b.count - below
                return inBucket > 0 ? lower + (b.le - lower) * (rank - below) / inBucket : b.le
            }
            lower = b.le.isInfinite ? lower : b.le
            below = b.count
        }
        return lower
    }

    /// One line: each stage's p50/p99 in ms, and how many sends were traced.
    var text: String {
        let traced = count("parse")
        guard traced > 0 else { return "no traced sends" }
        let parts = Self.order.compactMap { stage -> String? in
            guard let p50 = quantile(stage, 0.5), let p99 = quantile(stage, 0.99) else { return nil }
            return "\(stage) \(Self.ms(p50))/\(Self.ms(p99))"
        }
        return parts.joined(separator: ", ") + " ms (p50/p99; \(traced) sends traced)"
    }

    /// One line: frames per socket write, sends per commit, listener reads.
    var sharingText: String {
        func c(_ name: String) -> Double { counters[name] ?? 0 }
        let writes = c("staffcast_socket_writes_total"), commits = c("staffcast_send_batch_size_count")
        return String(format: "%.0f socket writes (%.2f frames each), %.0f commits (%.1f sends each), %.0f listener reads",
                      writes, writes > 0 ? c("staffcast_deliveries_total") / writes : 0,
                      commits, commits > 0 ? c("staffcast_send_batch_size_sum") / commits : 0, c("staffcast_listener_batches_total"))
    }

    static func ms(_ seconds: Double) -> String {
        let ms = seconds * 1_000
        return ms < 1 ? String(format: "%.3f", ms) : String(format: "%.2f", ms)
    }
}
