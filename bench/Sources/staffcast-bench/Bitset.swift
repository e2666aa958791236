import Foundation

/// A set of small non-negative integers (sequence numbers relative to a scenario's start).
struct Bitset {
    var words: [UInt64] = []

    /// Inserts `i`; false when it was there already.
    @inline(__always) mutating func insert(_ i: Int) -> Bool {
        let w = i >> 6
        if w >= words.count { words.append(contentsOf: repeatElement(0, count: w - words.count + 64)) }
        let bit = UInt64(1) << UInt64(i & 63)
        if words[w] & bit != 0 { return false }
        words[w] |= bit
        return true
    }

    func contains(_ i: Int) -> Bool {
        let w = i >> 6
        return w < words.count && words[w] & (UInt64(1) << UInt64(i & 63)) != 0
    }

    mutating func removeAll() { words.removeAll(keepingCapacity: true) }

    var count: Int { words.reduce(0) { $0 + $1.nonzeroBitCount } }

    /// How many members of `other` are not in `self`.
    func missing(of other: Bitset) -> Int {
        var n = 0
        for (w, bits) in other.words.enumerated() where bits != 0 {
            n += (bits & ~(w < words.count ? words[w] : 0)).nonzeroBitCount
        }
        return n
    }
}
