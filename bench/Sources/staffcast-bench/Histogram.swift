import Foundation

/// Latencies in microseconds: 1 µs buckets up to 100 ms, then 1 ms buckets up to 600 s.
struct Histogram {
    static let fine = 100_000
    static let coarse = 600_000
    var counts = [UInt32](repeating: 0, count: Histogram.fine + Histogram.coarse)
    private(set) var total = 0
    private(set) var maxUs: Int64 = 0

    mutating func add(us: Int64) {
        let v = max(0, us)
        let i = v < Int64(Self.fine) ? Int(v) : min(Self.fine + Self.coarse - 1, Self.fine + Int((v - Int64(Self.fine)) / 1_000))
        counts[i] &+= 1
        total += 1
        if v > maxUs { maxUs = v }
    }

    mutating func merge(_ other: Histogram) {
        guard other.total > 0 else { return }
        for i in counts.indices where other.counts[i] != 0 { counts[i] &+= other.counts[i] }
        total += other.total
        maxUs = max(maxUs, other.maxUs)
    }

    mutating func reset() {
        guard total > 0 else { return }
        for i in counts.indices { counts[i] = 0 }
        total = 0
        maxUs = 0
    }

    /// The value (ms) at or below which a fraction `p` of the samples lie; nil without samples.
    func percentileMs(_ p: Double) -> Double? {
        guard total > 0 else { return nil }
        let rank = max(1, Int((Double(total) * p).rounded(.up)))
        var seen = 0
        for i in counts.indices {
            seen += Int(counts[i])
            if seen >= rank {
                let us = i < Self.fine ? Double(i) : Double(Self.fine) + Double(i - Self.fine + 1) * 1_000
                return min(us, Double(maxUs)) / 1_000
            }
        }
        return Double(maxUs) / 1_000
    }

    var maxMs: Double? { total > 0 ? Double(maxUs) / 1_000 : nil }
}
