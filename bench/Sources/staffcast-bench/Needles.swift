import CBenchEpoll
import Foundation
import Glibc

// Scanning received bytes: memmem needles and the few fields the bench reads from frames.

/// Needles kept as C strings for memmem.
struct Needle: @unchecked Sendable {
    let pointer: UnsafeMutablePointer<CChar>
    let count: Int
    init(_ s: String) {
        pointer = strdup(s)!
        count = s.utf8.count
    }

    /// Offset of the needle in p[0..<n], or -1.
    @inline(__always) func find(_ p: UnsafePointer<UInt8>, _ n: Int) -> Int {
        Int(sc_find(p, n, pointer, count))
    }

    /// Whether p[0..<n] starts with the needle.
    @inline(__always) func isPrefix(of p: UnsafePointer<UInt8>, _ n: Int) -> Bool {
        n >= count && memcmp(p, pointer, count) == 0
    }
}

enum Needles {
    static let op = Needle(#""op":""#)
    static let seq = Needle(#""seq":"#)
    static let sentAt = Needle(#""sent_at":""#)
    static let stamp = Needle("bench-t=")
    static let code = Needle(#""code":""#)
    static let message = Needle(#"message""#)
    static let subscribed = Needle(#"subscribed""#)
    static let sent = Needle(#"sent""#)
    static let error = Needle(#"error""#)
    static let hello = Needle(#"hello""#)
    static let revoked = Needle(#"access_revoked""#)
    static let read = Needle(#"read""#)
    static let answered = Needle(#"answered""#)
    static let readCount = Needle(#""read_count":"#)
    static let id = Needle(#""id":""#)
    static let userID = Needle(#""user_id":"#)
    static let headEnd = Needle("\r\n\r\n")
}

/// The non-negative integer right after `needle` in p[0..<n] (skipping spaces), or nil.
@inline(__always) func integer(after needle: Needle, in p: UnsafePointer<UInt8>, _ n: Int) -> Int64? {
    let at = needle.find(p, n)
    guard at >= 0 else { return nil }
    return integer(at: at + needle.count, in: p, n)
}

@inline(__always) func integer(at start: Int, in p: UnsafePointer<UInt8>, _ n: Int) -> Int64? {
    var i = start
    while i < n && p[i] == 0x20 { i += 1 }
    var v: Int64 = 0
    var digits = 0
    while i < n, p[i] >= 48, p[i] <= 57 {
        v = v &* 10 &+ Int64(p[i] &- 48)
        i += 1
        digits += 1
    }
    return digits > 0 ? v : nil
}

/// The JSON string value right after `needle` (which ends with the opening quote), up to 80 bytes.
func shortString(after needle: Needle, in p: UnsafePointer<UInt8>, _ n: Int) -> String? {
    let at = needle.find(p, n)
    guard at >= 0 else { return nil }
    var end = at + needle.count
    while end < n && p[end] != 0x22 && end - at < 80 { end += 1 }
    return String(decoding: UnsafeBufferPointer(start: p + at + needle.count, count: end - at - needle.count), as: UTF8.self)
}

/// RFC 3339 "2026-11-21T16:22:23.859Z" (UTC, milliseconds) at p[0..<n] → ns since 1970.
func rfc3339Ns(_ p: UnsafePointer<UInt8>, _ n: Int) -> Int64? {
    guard n >= 23 else { return nil }
    @inline(__always) func num(_ from: Int, _ count: Int) -> Int {
        var v = 0
        for i in from..<from + count { v = v * 10 + Int(p[i] &- 48) }
        return v
    }
    let (y, m, d) = (num(0, 4), num(5, 2), num(8, 2))
    // days from civil (Howard Hinnant)
    let yy = m <= 2 ? y - 1 : y
    let era = (yy >= 0 ? yy : yy - 399) / 400
    let yoe = yy - era * 400
    let doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
    let days = era * 146_097 + doe - 719_468
    let seconds = days * 86_400 + num(11, 2) * 3_600 + num(14, 2) * 60 + num(17, 2)
    var fraction = 0
    var digits = 0
    var i = 20
    while i < n, digits < 9, p[i] >= 48, p[i] <= 57 { fraction = fraction * 10 + Int(p[i] - 48); digits += 1; i += 1 }
    while digits < 9 { fraction *= 10; digits += 1 }
    return Int64(seconds) * 1_000_000_000 + Int64(fraction)
}
