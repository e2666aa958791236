// staffcast-bench: N subscribers on one event, one publisher at a set rate; prints deliveries per
// second, latency from commit to receipt, lost messages and the server's memory per connection.
// Run by hand through `make bench` (bench/README.md); never part of `make test`.
import Foundation
import CBenchEpoll
import Glibc
import StaffcastClient

struct Options {
    var server = "http://127.0.0.1:8080"
    var serverPID: Int32 = 0
    var subscriberToken = ""
    var publisherToken = ""
    var event = ""
    var subscribers = 1_000
    var rate = 10.0
    var duration = 10.0
    var readers = 2

    static func parse() -> Options {
        var o = Options()
        var args = CommandLine.arguments.dropFirst().makeIterator()
        while let a = args.next() {
            guard let v = args.next() else { break }
            switch a {
            case "--server": o.server = v
            case "--server-pid": o.serverPID = Int32(v) ?? 0
            case "--subscriber-token": o.subscriberToken = v
            case "--publisher-token": o.publisherToken = v
            case "--event": o.event = v
            case "--subscribers": o.subscribers = Int(v) ?? o.subscribers
            case "--rate": o.rate = Double(v) ?? o.rate
            case "--duration": o.duration = Double(v) ?? o.duration
            case "--readers": o.readers = Int(v) ?? o.readers
            default: fatalError("unknown option \(a)")
            }
        }
        return o
    }
}

func rssKiB(_ pid: Int32) -> Int {
    guard pid > 0, let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return 0 }
    for line in text.split(separator: "\n") where line.hasPrefix("VmRSS:") {
        return Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]) ?? 0
    }
    return 0
}

func nowMillis() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_REALTIME, &ts)
    return Double(ts.tv_sec) * 1000 + Double(ts.tv_nsec) / 1e6
}

/// Parses RFC 3339 "2026-11-21T16:22:23.859Z" into ms since 1970, cheaply (no allocation).
func parseMillis(_ b: ArraySlice<UInt8>) -> Double? {
    let a = Array(b)
    guard a.count >= 23 else { return nil }
    func num(_ from: Int, _ n: Int) -> Int { (from..<from + n).reduce(0) { $0 * 10 + Int(a[$1] &- 48) } }
    let (y, m, d) = (num(0, 4), num(5, 2), num(8, 2))
    // days from civil (Howard Hinnant)
    let yy = m <= 2 ? y - 1 : y
    let era = (yy >= 0 ? yy : yy - 399) / 400
    let yoe = yy - era * 400
    let doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
    let days = era * 146_097 + doe - 719_468
    let seconds = days * 86_400 + num(11, 2) * 3_600 + num(14, 2) * 60 + num(17, 2)
    return Double(seconds) * 1000 + Double(num(20, 3))
}

/// Reads server frames from many sockets with epoll; counts `message` frames per subscriber.
final class Reader: @unchecked Sendable {
    let epfd = sc_epoll_create()
    var buffers: [Int32: [UInt8]] = [:]
    var received: [Int32: Int] = [:]
    var subscribed = 0
    var latencies: [Double] = []
    var deliveries = 0
    let lock = NSLock()
    var stop = false

    func add(_ fd: Int32, _ buffered: [UInt8]) {
        lock.lock()
        buffers[fd] = buffered
        received[fd] = 0
        lock.unlock()
        _ = sc_epoll_add(epfd, fd)
    }

    func run() {
        var chunk = [UInt8](repeating: 0, count: 65_536)
        var ready = [Int32](repeating: 0, count: 256)
        while !stop {
            let n = sc_epoll_wait(epfd, &ready, 256, 100)
            if n <= 0 { continue }
            let now = nowMillis()
            lock.lock()
            for fd in ready.prefix(Int(n)) {
                let got = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                if got <= 0 { continue }
                buffers[fd, default: []] += chunk[0..<got]
                drain(fd, now: now)
            }
            lock.unlock()
        }
    }

    /// A masked pong (clients must mask); the mask is zero, which RFC 6455 allows.
    private func pong(_ fd: Int32, _ payload: [UInt8]) {
        let frame: [UInt8] = [0x8A, 0x80 | UInt8(payload.count), 0, 0, 0, 0] + payload
        _ = frame.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    private func drain(_ fd: Int32, now: Double) {
        guard var b = buffers[fd] else { return }
        var offset = 0
        while b.count - offset >= 2 {
            var len = Int(b[offset + 1] & 0x7F)
            var head = 2
            if len == 126 {
                guard b.count - offset >= 4 else { break }
                len = Int(b[offset + 2]) << 8 | Int(b[offset + 3]); head = 4
            } else if len == 127 {
                guard b.count - offset >= 10 else { break }
                len = (0..<8).reduce(0) { $0 << 8 | Int(b[offset + 2 + $1]) }; head = 10
            }
            guard b.count - offset >= head + len else { break }
            let opcode = b[offset] & 0x0F
            let payload = b[(offset + head)..<(offset + head + len)]
            offset += head + len
            if opcode == 0x9 { pong(fd, Array(payload)); continue } // answer heartbeats like a real client
            if let r = payload.firstRange(of: Array(#""op":"message""#.utf8)), r.lowerBound >= 0 {
                received[fd, default: 0] += 1
                deliveries += 1
                if let at = payload.firstRange(of: Array(#""sent_at":""#.utf8)) {
                    let start = at.upperBound
                    if let sent = parseMillis(payload[start..<min(start + 24, payload.endIndex)]) {
                        latencies.append(now - sent)
                    }
                }
            } else if payload.firstRange(of: Array(#""op":"subscribed""#.utf8)) != nil {
                subscribed += 1
            }
        }
        b.removeFirst(offset)
        buffers[fd] = b
    }
}

func benchmark() throws {
let o = Options.parse()
var limit = rlimit()
getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
limit.rlim_cur = limit.rlim_max
setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)

let api = try APIClient(server: o.server, token: nil)
let rss0 = rssKiB(o.serverPID)
let readers = (0..<o.readers).map { _ in Reader() }

print("connecting \(o.subscribers) subscribers to \(api.webSocketURL) …")
let connectStart = Date()
let subscribe = #"{"op":"subscribe","event_id":"\#(o.event)"}"#
// Connect from 4 threads; the readers start once every socket is open.
let group = DispatchGroup()
let connectors = 4
for c in 0..<connectors {
    group.enter()
    Thread {
        for i in stride(from: c, to: o.subscribers, by: connectors) {
            do {
                let ws = try WebSocketClient(url: api.webSocketURL, headers: ["Authorization": "Bearer \(o.subscriberToken)"])
                try ws.send(text: subscribe)
                let (fd, buffered) = ws.detach()
                readers[i % readers.count].add(fd, buffered)
            } catch {
                print("connect failed: \(error)")
            }
        }
        group.leave()
    }.start()
}
group.wait()
for r in readers { Thread { r.run() }.start() }
func subscribedCount() -> Int { readers.reduce(0) { r, x in x.lock.lock(); defer { x.lock.unlock() }; return r + x.subscribed } }
while subscribedCount() < o.subscribers && Date().timeIntervalSince(connectStart) < 120 { usleep(50_000) }
let connectSeconds = Date().timeIntervalSince(connectStart)
sleep(1)
let rss1 = rssKiB(o.serverPID)
print(String(format: "subscribed %d in %.1f s; server RSS %d → %d KiB (%.1f KiB per connection)",
             subscribedCount(), connectSeconds, rss0, rss1, Double(rss1 - rss0) / Double(max(1, o.subscribers))))

// Publisher: one organiser connection sending at the set rate; counts acknowledged sends.
let publisher = try WebSocketClient(url: api.webSocketURL, headers: ["Authorization": "Bearer \(o.publisherToken)"])
var acked = 0
var errors = 0
let total = Int(o.rate * o.duration)
let interval = 1.0 / o.rate
let publishStart = Date()
for i in 0..<total {
    let due = publishStart.addingTimeInterval(Double(i) * interval)
    while Date() < due {
        if let ev = try publisher.receive(timeout: max(0, min(0.01, due.timeIntervalSinceNow))), case .text(let t) = ev {
            if t.contains(#""op":"sent""#) { acked += 1 } else if t.contains(#""op":"error""#) { errors += 1 }
        }
    }
    try publisher.send(text: #"{"op":"send","event_id":"\#(o.event)","message":"bench \#(i)"}"#)
}
let drainUntil = Date().addingTimeInterval(5)
while acked + errors < total && Date() < drainUntil {
    if let ev = try publisher.receive(timeout: 0.1), case .text(let t) = ev {
        if t.contains(#""op":"sent""#) { acked += 1 } else if t.contains(#""op":"error""#) { errors += 1 }
    }
}
let publishSeconds = Date().timeIntervalSince(publishStart)
// Let deliveries finish.
var last = -1
while true {
    sleep(1)
    let d = readers.reduce(0) { r, x in x.lock.lock(); defer { x.lock.unlock() }; return r + x.deliveries }
    if d == last || d >= acked * o.subscribers { break }
    last = d
}
readers.forEach { $0.stop = true }
let rss2 = rssKiB(o.serverPID)

var latencies: [Double] = []
var deliveries = 0
var lost = 0
for r in readers {
    r.lock.lock()
    latencies += r.latencies
    deliveries += r.deliveries
    for (_, n) in r.received { lost += max(0, acked - n) }
    r.lock.unlock()
}
latencies.sort()
func pct(_ p: Double) -> Double { latencies.isEmpty ? 0 : latencies[min(latencies.count - 1, Int(Double(latencies.count) * p))] }
print(String(format: """
    published %d messages (%d acknowledged, %d refused) at %.0f/s over %.1f s
    deliveries %d (%.0f per second of publishing), lost %d
    latency commit→receipt ms: p50 %.1f  p99 %.1f  max %.1f   (sent_at has ms resolution)
    server RSS after run %d KiB
    """, total, acked, errors, o.rate, publishSeconds, deliveries, Double(deliveries) / publishSeconds, lost,
             pct(0.5), pct(0.99), latencies.last ?? 0, rss2))
}

try benchmark()
