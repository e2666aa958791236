import CBenchEpoll
import Foundation
import Glibc

/// How a publisher sends: at a fixed rate for a time, flat out for a time, or a fixed count.
enum PublishPlan {
    case paced(rate: Double, duration: Double)
    case flat(duration: Double)
    case count(Int)

    /// The plan from `start` (monotonic ns): how many messages at the most, the gap between
    /// paced sends (0: as fast as the window allows), and when sending ends.
    func schedule(start: Int64) -> (total: Int, interval: Int64, end: Int64) {
        switch self {
        case .paced(let rate, let duration): (max(1, Int(rate * duration)), Int64(1e9 / rate), Int64.max)
        case .flat(let duration): (Int.max, 0, start + Int64(duration * 1e9))
        case .count(let k): (k, 0, Int64.max)
        }
    }
}

/// What a publisher did. Sequence numbers are relative to the scenario's base (seq - base - 1).
struct PublishResult {
    var sent = 0
    var acked = 0
    var acks = Bitset()
    var errors: [String: Int] = [:]
    var errorSample: String?
    var firstSendNs: Int64 = 0
    var lastSendNs: Int64 = 0
    var lastAckNs: Int64 = 0
    /// Paced sends that went out more than 5 ms after their slot.
    var lateSends = 0
    /// Paced slots that found the in-flight window full (the publisher was held back).
    var heldBack = 0
    /// Requests without an answer when the publisher gave up waiting.
    var unanswered = 0
    var reconnects = 0
    var failure: String?
    /// Send → `sent`/201 (insert and commit, seen by the publisher).
    var sendToAck = Histogram()

    var sendSeconds: Double { lastSendNs > firstSendNs ? Double(lastSendNs - firstSendNs) / 1e9 : 0 }
    /// Messages acknowledged per second, from the first send to the last acknowledgement.
    var ackRate: Double {
        lastAckNs > firstSendNs ? Double(acked) / (Double(lastAckNs - firstSendNs) / 1e9) : 0
    }

    mutating func error(_ code: String, _ sample: String) {
        errors[code, default: 0] += 1
        if errorSample == nil { errorSample = sample }
    }

    /// Whether a publisher's loop ends now: once it stopped sending (`stoppedAt`, set here) and
    /// nothing is in flight, or 15 s later with sends unanswered; or at any time when no answer
    /// came for 10 s with sends in flight. The last two are failures. `unit` names a send in the
    /// failure ("PUBs"), `answer` what did not come, `hint` a guess at why.
    mutating func isOver(now: Int64, sending: Bool, stoppedAt: inout Int64, lastProgress: Int64, inFlight: Int,
                         unit: String, answer: String, hint: String = "") -> Bool {
        if !sending {
            if stoppedAt == 0 { stoppedAt = now }
            if inFlight == 0 { return true }
            if now - stoppedAt > 15_000_000_000 {
                unanswered = inFlight
                failure = "\(inFlight) \(unit) unanswered 15 s after the last"
                return true
            }
        }
        if inFlight > 0 && now - lastProgress > 10_000_000_000 {
            unanswered = inFlight
            failure = "no \(answer) for 10 s with \(inFlight) \(unit) in flight\(hint)"
            return true
        }
        return false
    }
}

/// The text of the n-th bench message: the publisher's monotonic clock at send time, so a
/// subscriber on this machine measures send → receipt to the microsecond.
@inline(__always) func messageText(_ n: Int, now: Int64) -> String { "bench-t=\(now) n=\(n)" }

/// One organiser WebSocket sending `send` ops, with at most `window` unanswered at a time.
final class WebSocketPublisher {
    let host: String, port: Int, token: String, event: String, base: Int64

    init(host: String, port: Int, token: String, event: String, base: Int64) {
        (self.host, self.port, self.token, self.event, self.base) = (host, port, token, event, base)
    }

    /// `limit`: the publisher sends message i only while i < limit() (flatout-bounded: the
    /// slowest subscriber's progress + BOUNDED_AHEAD); nil = no limit.
    func run(_ plan: PublishPlan, window: Int, limit: (() -> Int)? = nil) -> PublishResult {
        WindowedSender.connect(host: host, port: port) { s in
            guard Net.writeAll(s.fd, upgradeRequest(host: host, port: port, token: token)) else { s.r.failure = "upgrade: write failed"; return }
            let deadline = monoNs() + 10_000_000_000
            var head: HTTPHead?
            while head == nil && monoNs() < deadline {
                guard Net.read(s.fd, into: &s.rx, timeoutMs: 100) != nil else { break }
                head = HTTPHead.parse(s.rx)
            }
            guard let head, head.status == 101 else {
                s.r.failure = "publisher upgrade refused: HTTP \(head?.status ?? 0) \(String(decoding: s.rx.suffix(160), as: UTF8.self))"
                return
            }
            s.rx.removeFirst(head.headLength)

            let prefix = Array(#"{"op":"send","event_id":"\#(event)","ref":""#.utf8)
            s.run(plan, window: window, limit: limit, unit: "sends", answer: "reply", closeLeavesUnanswered: false,
                  frame: { n, now in
                      // {"op":"send","event_id":"…","ref":"N","message":"bench-t=… n=N"}
                      var payload = prefix
                      payload += Array("\(n)\",\"message\":\"\(messageText(n, now: now))\"}".utf8)
                      return payload.withUnsafeBytes { clientFrame(opcode: 0x1, $0) }
                  },
                  receive: { got in receive(s, at: got) })
        }
    }

    /// Takes the replies and control frames in `s.rx`; false when the server closed the connection.
    private func receive(_ s: WindowedSender, at got: Int64) -> Bool {
        var closed: String?
        let used = s.rx.withUnsafeBufferPointer { buf -> Int in
            splitFrames(buf.baseAddress!, buf.count) { _, opcode, p, len in
                switch opcode {
                case 0x1:
                    var at = Needles.op.find(p, min(len, 512))
                    if at < 0 { at = Needles.op.find(p, len) }
                    guard at >= 0 else { return true }
                    let q = p + at + Needles.op.count, rest = len - at - Needles.op.count
                    let isSent = Needles.sent.isPrefix(of: q, rest)
                    let isError = Needles.error.isPrefix(of: q, rest)
                    guard isSent || isError else { return true }
                    s.inFlight -= 1
                    s.lastProgress = got
                    if let ref = integer(after: Needle.ref, in: p, len), Int(ref) < s.sendTimes.count {
                        s.r.sendToAck.add(us: (got - s.sendTimes[Int(ref)]) / 1_000)
                    }
                    if isSent, let seq = integer(after: Needles.seq, in: p, len) {
                        s.r.acked += 1
                        s.r.lastAckNs = got
                        let index = Int(seq - base - 1)
                        if index >= 0 { _ = s.r.acks.insert(index) }
                    } else {
                        s.r.error(shortString(after: Needles.code, in: p, len) ?? "?",
                                  String(decoding: UnsafeBufferPointer(start: p, count: min(len, 240)), as: UTF8.self))
                    }
                case 0x8:
                    let code = len >= 2 ? Int(p[0]) << 8 | Int(p[1]) : 1005
                    closed = "the server closed the publisher (\(code))"
                    return false
                case 0x9:
                    s.out += clientFrame(opcode: 0xA, UnsafeRawBufferPointer(start: p, count: len))
                default:
                    break
                }
                return true
            }
        }
        s.rx.removeFirst(used)
        if let closed { s.r.failure = closed; s.r.unanswered = s.inFlight; return false }
        return true
    }
}

extension Needle {
    static let ref = Needle(#""ref":""#)
}

/// Organiser HTTP connections (keep-alive) posting messages, each with up to `pipeline`
/// requests written ahead of their answers. A paced plan spreads its sends over the connections
/// (each one goes to the next connection with room; none with room = held back).
///
/// nchan (`target`): POST /pub/bench with the message text as the body; 201 or 202 is the
/// acknowledgement, and the answered request's own index stands for the seq.
final class HTTPPublisher {
    let host: String, port: Int, token: String, event: String, base: Int64
    let target: Target

    init(host: String, port: Int, token: String, event: String, base: Int64, target: Target = .staffcast) {
        (self.host, self.port, self.token, self.event, self.base, self.target) = (host, port, token, event, base, target)
    }

    private final class Conn {
        var fd: Int32 = -1
        var rx: [UInt8] = []
        var out: [UInt8] = []
        /// Send times of requests written and not yet answered, oldest first.
        var waiting: [Int64] = []
        /// The message index of each of those requests.
        var waitingN: [Int] = []
        var waitingHead = 0
        var inFlight: Int { waiting.count - waitingHead }
    }

    func run(_ plan: PublishPlan, connections: Int, pipeline: Int, limit: (() -> Int)? = nil) -> PublishResult {
        var r = PublishResult()
        var conns: [Conn] = []
        for _ in 0..<max(1, connections) {
            switch Net.connect(host: host, port: port) {
            case .failure(let e): r.failure = e.description; conns.forEach { Wire.closeReset($0.fd) }; return r
            case .success(let fd):
                let c = Conn()
                c.fd = fd
                conns.append(c)
            }
        }
        defer { for c in conns where c.fd >= 0 { Wire.closeReset(c.fd) } }
        let headPrefix = target == .nchan
            ? "POST /pub/bench HTTP/1.1\r\nHost: \(host):\(port)\r\nContent-Type: text/plain\r\nContent-Length: "
            : "POST /v1/events/\(event)/messages HTTP/1.1\r\nHost: \(host):\(port)\r\nAuthorization: Bearer \(token)\r\nContent-Type: application/json\r\nContent-Length: "
        var n = 0
        let start = monoNs()
        let (total, interval, end) = plan.schedule(start: start)
        var next = start
        var turn = 0
        var stopSendingAt: Int64 = 0
        var lastProgress = start

        func request(_ now: Int64, _ c: Conn) -> [UInt8] {
            let body = target == .nchan ? messageText(n, now: now) : "{\"message\":\"\(messageText(n, now: now))\"}"
            c.waiting.append(now)
            c.waitingN.append(n)
            n += 1
            r.sent += 1
            if r.firstSendNs == 0 { r.firstSendNs = now }
            r.lastSendNs = now
            return Array((headPrefix + "\(body.utf8.count)\r\n\r\n" + body).utf8)
        }

        var polls = [pollfd](repeating: pollfd(), count: conns.count)
        while true {
            let now = monoNs()
            let sending = n < total && now < end
            let inFlight = conns.reduce(0) { $0 + $1.inFlight }
            if sending && interval > 0 {
                slots: while next <= now && n < total {
                    for k in 0..<conns.count {
                        let c = conns[(turn + k) % conns.count]
                        guard c.fd >= 0 && c.inFlight < pipeline else { continue }
                        if now - next > 5_000_000 { r.lateSends += 1 }
                        c.out += request(now, c)
                        turn = (turn + k + 1) % conns.count
                        next += interval
                        continue slots
                    }
                    r.heldBack += 1
                    break
                }
            } else if sending {
                let allowed = limit?() ?? Int.max
                for c in conns where c.fd >= 0 {
                    while c.inFlight < pipeline && n < total && n < allowed {
                        c.out += request(now, c)
                    }
                }
            }
            if r.isOver(now: now, sending: sending, stoppedAt: &stopSendingAt, lastProgress: lastProgress, inFlight: inFlight,
                        unit: "requests", answer: "response", hint: " (pipelining stalled?)") { break }
            if conns.allSatisfy({ $0.fd < 0 }) { r.failure = r.failure ?? "every HTTP connection was closed"; break }
            for (i, c) in conns.enumerated() {
                if c.fd >= 0 && !c.out.isEmpty {
                    let w = c.out.withUnsafeBytes { Wire.send(c.fd, $0.baseAddress, $0.count) }
                    if w > 0 { c.out.removeFirst(w) }
                }
                polls[i] = pollfd(fd: c.fd, events: Int16(POLLIN) | (c.out.isEmpty ? 0 : Int16(POLLOUT)), revents: 0)
            }
            var timeout: Int32 = 50
            // Paced: wake for the next slot, unless no connection has room (then for an answer).
            if sending && interval > 0 && conns.contains(where: { $0.fd >= 0 && $0.inFlight < pipeline }) {
                timeout = Int32(max(0, min(50, (next - monoNs() + 999_999) / 1_000_000)))
            } else if sending && limit != nil && conns.contains(where: { $0.fd >= 0 && $0.inFlight < pipeline }) {
                timeout = 1 // waiting for the slowest subscriber, not for an answer
            }
            if poll(&polls, nfds_t(polls.count), timeout) <= 0 { continue }
            let got = monoNs()
            for (i, c) in conns.enumerated() where c.fd >= 0 && polls[i].revents & Int16(POLLIN | POLLERR | POLLHUP) != 0 {
                let alive = Net.read(c.fd, into: &c.rx, timeoutMs: 0) != nil
                var used = 0
                c.rx.withUnsafeBufferPointer { buf in
                    let p = buf.baseAddress!
                    while used < buf.count, let head = HTTPHead.parse(p + used, buf.count - used) {
                        guard let length = head.contentLength, !head.chunked else {
                            r.failure = "a response without content-length (not supported by the bench)"
                            used = buf.count
                            return
                        }
                        guard buf.count - used >= head.headLength + length else { break }
                        let body = p + used + head.headLength
                        var index = -1
                        if c.waitingHead < c.waiting.count {
                            r.sendToAck.add(us: (got - c.waiting[c.waitingHead]) / 1_000)
                            index = c.waitingN[c.waitingHead]
                            c.waitingHead += 1
                        }
                        lastProgress = got
                        if target == .nchan && (head.status == 201 || head.status == 202) && index >= 0 {
                            r.acked += 1
                            r.lastAckNs = got
                            _ = r.acks.insert(index)
                        } else if target == .staffcast && head.status == 201, let seq = integer(after: Needles.seq, in: body, length) {
                            r.acked += 1
                            r.lastAckNs = got
                            let index = Int(seq - base - 1)
                            if index >= 0 { _ = r.acks.insert(index) }
                        } else {
                            r.error("\(head.status) \(shortString(after: Needles.code, in: body, length) ?? "")",
                                    String(decoding: UnsafeBufferPointer(start: body, count: min(length, 240)), as: UTF8.self))
                        }
                        used += head.headLength + length
                        if head.close { break }
                    }
                }
                c.rx.removeFirst(used)
                if c.waitingHead > 4_096 { c.waiting.removeFirst(c.waitingHead); c.waitingN.removeFirst(c.waitingHead); c.waitingHead = 0 }
                if !alive {
                    // The server closed the connection: what was in flight has no answer (it may
                    // still have been stored). Open a new one.
                    r.unanswered += c.inFlight
                    r.reconnects += 1
                    Wire.closeReset(c.fd)
                    c.fd = -1
                    c.rx = []
                    c.out = []
                    c.waiting = []
                    c.waitingN = []
                    c.waitingHead = 0
                    if case .success(let fd) = Net.connect(host: host, port: port) { c.fd = fd }
                }
            }
        }
        return r
    }
}
