import CBenchEpoll
import Foundation
import Glibc

/// The NATS publisher: one TCP connection to the client port (NATS's own publishing path),
/// `verbose` on so the server answers every PUB with `+OK` — its acknowledgement, as a `sent`
/// reply is staffcast's and a 201/202 nchan's — with at most `window` unanswered. `+OK`s come
/// in order, so each one acknowledges the oldest PUB in flight; its index stands for the seq.
final class NATSPublisher {
    let host: String, port: Int

    init(host: String, port: Int) { (self.host, self.port) = (host, port) }

    /// `limit`: send message i only while i < limit() (flatout-bounded); nil = no limit.
    func run(_ plan: PublishPlan, window: Int, limit: (() -> Int)? = nil) -> PublishResult {
        var r = PublishResult()
        let fd: Int32
        switch Net.connect(host: host, port: port) {
        case .failure(let e): r.failure = e.description; return r
        case .success(let s): fd = s
        }
        defer { Wire.closeReset(fd) }
        // CONNECT, then PING: the PONG says the server took it (the +OK of CONNECT comes first).
        guard Net.writeAll(fd, Array("CONNECT {\"verbose\":true,\"pedantic\":false,\"protocol\":1}\r\nPING\r\n".utf8)) else {
            r.failure = "NATS CONNECT: write failed"; return r
        }
        var rx: [UInt8] = []
        var ready = false
        var refused: String?
        let deadline = monoNs() + 10_000_000_000
        while !ready && refused == nil && monoNs() < deadline {
            guard Net.read(fd, into: &rx, timeoutMs: 100) != nil else { break }
            let used = rx.withUnsafeBufferPointer { b in
                splitNATS(b.baseAddress!, b.count) { op in
                    if case .pong = op { ready = true }
                    if case .err(let line) = op { refused = line }
                }
            }
            rx.removeFirst(used)
        }
        guard ready else { r.failure = "NATS publisher: \(refused ?? "no PONG to CONNECT within 10 s")"; return r }

        var sendTimes: [Int64] = []
        var ackHead = 0
        var out: [UInt8] = []
        var n = 0
        let start = monoNs()
        var lastProgress = start
        var stopSendingAt: Int64 = 0
        var total = Int.max
        var interval: Int64 = 0
        var end = Int64.max
        switch plan {
        case .paced(let rate, let duration):
            total = max(1, Int(rate * duration))
            interval = Int64(1e9 / rate)
        case .flat(let duration): end = start + Int64(duration * 1e9)
        case .count(let k): total = k
        }
        var next = start
        var inFlight: Int { sendTimes.count - ackHead }

        func append(_ now: Int64) {
            let text = messageText(n, now: now)
            out += Array("PUB bench \(text.utf8.count)\r\n\(text)\r\n".utf8)
            sendTimes.append(now)
            if r.firstSendNs == 0 { r.firstSendNs = now }
            r.lastSendNs = now
            n += 1
            r.sent += 1
        }

        while true {
            let now = monoNs()
            let sending = n < total && now < end
            let allowed = limit?() ?? Int.max
            if sending {
                if interval > 0 {
                    while next <= now && n < total {
                        if inFlight >= window { r.heldBack += 1; break }
                        if now - next > 5_000_000 { r.lateSends += 1 }
                        append(now)
                        next += interval
                    }
                } else {
                    while inFlight < window && n < total && n < allowed { append(now) }
                }
            } else {
                if stopSendingAt == 0 { stopSendingAt = now }
                if inFlight == 0 { break }
                if now - stopSendingAt > 15_000_000_000 { r.unanswered = inFlight; r.failure = "\(inFlight) PUBs unanswered 15 s after the last"; break }
            }
            if inFlight > 0 && now - lastProgress > 10_000_000_000 {
                r.unanswered = inFlight
                r.failure = "no +OK for 10 s with \(inFlight) PUBs in flight"
                break
            }
            if !out.isEmpty {
                let w = out.withUnsafeBytes { Wire.send(fd, $0.baseAddress, $0.count) }
                if w > 0 { out.removeFirst(w) } else if w < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR {
                    r.failure = "publisher send: \(String(cString: strerror(errno)))"
                    break
                }
            }
            var timeout: Int32 = 50
            if sending && interval > 0 && inFlight < window { timeout = Int32(max(0, min(50, (next - monoNs()) / 1_000_000))) }
            if sending && interval == 0 && inFlight < window { timeout = n < allowed ? 0 : 1 }
            var p = pollfd(fd: fd, events: Int16(POLLIN) | (out.isEmpty ? 0 : Int16(POLLOUT)), revents: 0)
            if poll(&p, 1, timeout) <= 0 || p.revents & Int16(POLLIN | POLLERR | POLLHUP) == 0 { continue }
            guard Net.read(fd, into: &rx, timeoutMs: 0) != nil else { r.failure = "the server closed the publisher's connection"; r.unanswered = inFlight; break }
            let got = monoNs()
            var pongs = 0
            let used = rx.withUnsafeBufferPointer { b in
                splitNATS(b.baseAddress!, b.count) { op in
                    switch op {
                    case .ok:
                        guard ackHead < sendTimes.count else { return }
                        r.sendToAck.add(us: (got - sendTimes[ackHead]) / 1_000)
                        _ = r.acks.insert(ackHead)
                        ackHead += 1
                        r.acked += 1
                        r.lastAckNs = got
                        lastProgress = got
                    case .err(let line):
                        // -ERR answers the oldest PUB in flight (a refusal), or ends the connection.
                        if ackHead < sendTimes.count { ackHead += 1 }
                        lastProgress = got
                        r.error(String(line.prefix(60)), line)
                    case .ping: pongs += 1
                    case .pong, .info, .msg: break
                    }
                }
            }
            rx.removeFirst(used)
            for _ in 0..<pongs { out += Array("PONG\r\n".utf8) }
        }
        return r
    }
}
