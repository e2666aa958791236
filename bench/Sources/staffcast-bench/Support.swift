import CBenchEpoll
import Foundation
import Glibc

// Small pieces the benchmark is built from: clocks, a latency histogram, a bitset of sequence
// numbers, /proc readings, byte scanning, WebSocket frame building and a blocking HTTP GET.

@inline(__always) func monoNs() -> Int64 { Int64(sc_mono_ns()) }
@inline(__always) func realNs() -> Int64 { Int64(sc_real_ns()) }

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

// MARK: /proc

enum Proc {
    static let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))

    static func alive(_ pid: Int32) -> Bool { pid > 0 && kill(pid, 0) == 0 }

    /// VmRSS in KiB, 0 when unknown.
    static func rssKiB(_ pid: Int32) -> Int {
        guard pid > 0, let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return 0 }
        for line in text.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            return Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]) ?? 0
        }
        return 0
    }

    /// Pss in KiB (/proc/PID/smaps_rollup: resident pages, each shared page divided among the
    /// processes that map it), 0 when unknown.
    static func pssKiB(_ pid: Int32) -> Int {
        guard pid > 0, let text = try? String(contentsOfFile: "/proc/\(pid)/smaps_rollup", encoding: .utf8) else { return 0 }
        for line in text.split(separator: "\n") where line.hasPrefix("Pss:") {
            return Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]) ?? 0
        }
        return 0
    }

    /// Fields of /proc/PID/stat after the command name: [0] is field 3 (state).
    private static func statFields(_ pid: Int32) -> [Substring]? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = text.lastIndex(of: ")") else { return nil }
        return text[text.index(after: close)...].split(separator: " ")
    }

    /// utime + stime of a process in seconds.
    static func cpuSeconds(_ pid: Int32) -> Double {
        guard pid > 0, let f = statFields(pid), f.count > 12 else { return 0 }
        return ((Double(f[11]) ?? 0) + (Double(f[12]) ?? 0)) / ticksPerSecond
    }

    /// utime + stime of a process and its live children (PostgreSQL: postmaster and backends).
    static func treeCPUSeconds(_ pid: Int32) -> Double {
        guard pid > 0 else { return 0 }
        var total = cpuSeconds(pid)
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        for name in entries {
            guard let child = Int32(name), child != pid, let f = statFields(child), f.count > 12,
                  Int32(f[1]) == pid else { continue }
            total += ((Double(f[11]) ?? 0) + (Double(f[12]) ?? 0)) / ticksPerSecond
        }
        return total
    }

    /// This process's user + system CPU in seconds.
    static func selfCPUSeconds() -> Double {
        var u = rusage()
        getrusage(RUSAGE_SELF.rawValue, &u)
        return Double(u.ru_utime.tv_sec) + Double(u.ru_utime.tv_usec) / 1e6
            + Double(u.ru_stime.tv_sec) + Double(u.ru_stime.tv_usec) / 1e6
    }
}

// MARK: scanning bytes

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

// MARK: WebSocket frames (client side: masked, with a zero mask, which RFC 6455 allows)

func clientFrame(opcode: UInt8, _ payload: UnsafeRawBufferPointer) -> [UInt8] {
    var f: [UInt8] = [0x80 | opcode]
    let n = payload.count
    if n < 126 {
        f.append(0x80 | UInt8(n))
    } else if n <= 0xFFFF {
        f += [0x80 | 126, UInt8(n >> 8), UInt8(n & 0xFF)]
    } else {
        f.append(0x80 | 127)
        for shift in stride(from: 56, through: 0, by: -8) { f.append(UInt8((n >> shift) & 0xFF)) }
    }
    f += [0, 0, 0, 0]
    f += payload
    return f
}

func clientFrame(text: String) -> [UInt8] {
    Array(text.utf8).withUnsafeBytes { clientFrame(opcode: 0x1, $0) }
}

/// Splits complete server frames (unmasked) off the front of p[0..<n]. Calls `body` with
/// (fin, opcode, payload, length) for each; `body` returns false to stop. Returns the bytes used.
@inline(__always) func splitFrames(_ p: UnsafePointer<UInt8>, _ n: Int,
                                   _ body: (Bool, UInt8, UnsafePointer<UInt8>, Int) -> Bool) -> Int {
    var o = 0
    while n - o >= 2 {
        let b0 = p[o], b1 = p[o + 1]
        var len = Int(b1 & 0x7F)
        var head = 2
        if len == 126 {
            guard n - o >= 4 else { break }
            len = Int(p[o + 2]) << 8 | Int(p[o + 3])
            head = 4
        } else if len == 127 {
            guard n - o >= 10 else { break }
            len = 0
            for k in 0..<8 { len = len << 8 | Int(p[o + 2 + k]) }
            head = 10
        }
        if b1 & 0x80 != 0 { head += 4 } // servers do not mask; skip a mask key if one comes anyway
        guard n - o >= head + len else { break }
        let payload = p + o + head
        o += head + len
        if !body(b0 & 0x80 != 0, b0 & 0x0F, payload, len) { break }
    }
    return o
}

/// The request line and headers of a WebSocket upgrade to /v1/ws with a bearer token.
func upgradeRequest(host: String, port: Int, token: String) -> [UInt8] {
    Array(("GET /v1/ws HTTP/1.1\r\nHost: \(host):\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
        + "Sec-WebSocket-Protocol: staffcast.v1\r\nAuthorization: Bearer \(token)\r\n\r\n").utf8)
}

// MARK: blocking sockets for the publisher and the few control requests

enum Net {
    /// A connected TCP socket (non-blocking), or an error text.
    static func connect(host: String, port: Int, timeout: Double = 10) -> Result<Int32, BenchFailure> {
        let fd = Wire.connect(host, port)
        if fd < 0 { return .failure(BenchFailure("connect \(host):\(port): \(String(cString: strerror(-fd)))")) }
        var p = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
        let r = poll(&p, 1, Int32(timeout * 1000))
        let e = sc_so_error(fd)
        if r <= 0 || e != 0 {
            Wire.closeReset(fd)
            return .failure(BenchFailure("connect \(host):\(port): \(r <= 0 ? "timed out" : String(cString: strerror(e)))"))
        }
        return .success(fd)
    }

    /// Writes all bytes to a non-blocking socket (waiting with poll when it is full).
    static func writeAll(_ fd: Int32, _ bytes: [UInt8], timeout: Double = 10) -> Bool {
        var off = 0
        let deadline = monoNs() + Int64(timeout * 1e9)
        while off < bytes.count {
            let n = bytes.withUnsafeBytes { Wire.send(fd, $0.baseAddress! + off, $0.count - off) }
            if n > 0 { off += n; continue }
            if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
                if monoNs() > deadline { return false }
                var p = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                _ = poll(&p, 1, 100)
                continue
            }
            return false
        }
        return true
    }

    /// Reads what is there (waiting up to `timeoutMs`); nil on end of stream or error.
    static func read(_ fd: Int32, into buffer: inout [UInt8], timeoutMs: Int32) -> Int? {
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let r = poll(&p, 1, timeoutMs)
        if r == 0 { return 0 }
        var chunk = [UInt8](repeating: 0, count: 65_536)
        let n = chunk.withUnsafeMutableBytes { Wire.recv(fd, $0.baseAddress!, $0.count) }
        if n > 0 { buffer += chunk[0..<n]; return n }
        if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) { return 0 }
        return nil
    }

    /// One HTTP/1.1 GET; (status, body) or nil.
    static func get(host: String, port: Int, path: String, token: String?) -> (status: Int, body: String)? {
        request(host: host, port: port, method: "GET", path: path, token: token, json: nil)
    }

    /// One HTTP/1.1 request on a fresh connection, with an optional JSON body; (status, body) or nil.
    static func request(host: String, port: Int, method: String, path: String, token: String?, json: String?) -> (status: Int, body: String)? {
        guard case .success(let fd) = connect(host: host, port: port) else { return nil }
        defer { Wire.closeReset(fd) }
        var request = "\(method) \(path) HTTP/1.1\r\nHost: \(host):\(port)\r\nConnection: close\r\n"
        if let token { request += "Authorization: Bearer \(token)\r\n" }
        if let json { request += "Content-Type: application/json\r\nContent-Length: \(json.utf8.count)\r\n\r\n" + json } else { request += "\r\n" }
        guard writeAll(fd, Array(request.utf8)) else { return nil }
        var buffer: [UInt8] = []
        let deadline = monoNs() + 10_000_000_000
        while monoNs() < deadline {
            guard let n = read(fd, into: &buffer, timeoutMs: 200) else { break }
            if let parsed = HTTPHead.parse(buffer), buffer.count >= parsed.headLength + (parsed.contentLength ?? Int.max) {
                let body = buffer[parsed.headLength..<(parsed.headLength + parsed.contentLength!)]
                return (parsed.status, String(decoding: body, as: UTF8.self))
            }
            _ = n
        }
        guard let parsed = HTTPHead.parse(buffer) else { return nil }
        return (parsed.status, String(decoding: buffer[parsed.headLength...], as: UTF8.self))
    }
}

/// The head of an HTTP response at the front of a buffer.
struct HTTPHead {
    var status: Int
    var headLength: Int
    var contentLength: Int?
    var chunked: Bool
    var close: Bool

    static func parse(_ bytes: [UInt8]) -> HTTPHead? {
        bytes.withUnsafeBufferPointer { parse($0.baseAddress!, $0.count) }
    }

    static func parse(_ p: UnsafePointer<UInt8>, _ n: Int) -> HTTPHead? {
        let end = Needles.headEnd.find(p, n)
        guard end >= 12 else { return nil }
        let head = String(decoding: UnsafeBufferPointer(start: p, count: end), as: UTF8.self).lowercased()
        let lines = head.split(separator: "\r\n")
        guard let first = lines.first, first.hasPrefix("http/1."), first.count >= 12,
              let status = Int(first.dropFirst(9).prefix(3)) else { return nil }
        var h = HTTPHead(status: status, headLength: end + 4, contentLength: nil, chunked: false, close: false)
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].trimmingCharacters(in: .whitespaces)
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            switch name {
            case "content-length": h.contentLength = Int(value)
            case "transfer-encoding": h.chunked = value.contains("chunked")
            case "connection": h.close = value.contains("close")
            default: break
            }
        }
        return h
    }
}

struct BenchFailure: Error, CustomStringConvertible {
    let description: String
    init(_ text: String) { description = text }
}

func fmt(_ format: String, _ args: CVarArg...) -> String { String(format: format, arguments: args) }

/// 12345678 → "12,345,678".
func grouped(_ v: Int) -> String {
    let s = String(abs(v))
    var out = ""
    for (i, c) in s.enumerated() {
        if i > 0 && (s.count - i) % 3 == 0 { out.append(",") }
        out.append(c)
    }
    return v < 0 ? "-" + out : out
}

func log(_ text: String) {
    print(text)
    fflush(nil) // stdout is a line buffer only on a terminal; scripts/bench.sh tees the output
}
