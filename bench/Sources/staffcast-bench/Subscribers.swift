import CBenchEpoll
import Foundation
import Glibc

/// One subscriber connection, owned by one `SubscriberLoop`.
final class Subscriber {
    enum State { case connecting, handshake, open, subscribed, closed }
    let fd: Int32
    var state = State.connecting
    /// Bytes of an incomplete frame (or response head) left from the last read.
    var partial: [UInt8] = []
    /// A fragmented text message being put together (servers rarely fragment).
    var fragment: [UInt8]?
    /// Bytes the socket did not take yet.
    var out: [UInt8] = []
    /// Sequence numbers received in this scenario, relative to the loop's `base`.
    var received = Bitset()
    var subscribeTries = 0
    /// The close code the server sent (−1: the connection ended without a close frame).
    var closeCode = 0
    /// Its own upgrade request (its own token: the read storm's distinct users); nil = the loop's.
    var upgrade: [UInt8]?
    /// Read storm: when this subscriber sent its `mark_read` (0: not sent), and `read` replies got.
    var markSentNs: Int64 = 0
    var readReplies = 0
    /// Which of the loop's servers it is connected to (an index into `ports`).
    var server = 0
    /// NATS: protocol bytes of an operation not yet complete (frames need not end at a line).
    var stream: [UInt8] = []

    init(fd: Int32) { self.fd = fd }
}

/// What one loop saw while opening connections.
struct OpenStats {
    var requested = 0
    var opened = 0
    var subscribed = 0
    var failed = 0
    var subscribeRetries = 0
    var firstConnectNs: Int64 = 0
    var lastSubscribedNs: Int64 = 0
    var failures: [String: Int] = [:]

    mutating func fail(_ reason: String) {
        failed += 1
        failures[reason, default: 0] += 1
    }
}

/// What one loop saw of message traffic in a scenario.
struct TrafficStats {
    var deliveries = 0
    var duplicates = 0
    var stale = 0
    var historyMessages = 0
    var firstDeliveryNs: Int64 = 0
    var lastDeliveryNs: Int64 = 0
    var pings = 0
    var errors: [String: Int] = [:]
    var revoked = 0
    var closedByServer: [Int: Int] = [:]
    /// Deliveries per server (three-servers: an index into the loop's ports).
    var perServer: [Int] = []
    /// Publisher's send (monotonic stamp in the text) → receipt, µs precision.
    var sendToReceipt = Histogram()
    /// Message `sent_at` (PostgreSQL transaction start, ms on the wire) → receipt.
    var commitToReceipt = Histogram()
}

/// What one loop saw of a read storm: every subscribed connection sends one `mark_read`.
struct MarkStats {
    var sent = 0
    var replies = 0
    /// `read` replies beyond the first on one connection.
    var duplicateReplies = 0
    /// `read` replies naming another message.
    var wrongMessage = 0
    var errors: [String: Int] = [:]
    var errorSample: String?
    var firstSendNs: Int64 = 0
    var lastSendNs: Int64 = 0
    var lastReplyNs: Int64 = 0
    /// `mark_read` sent → its `read` reply, per subscriber.
    var markToReply = Histogram()
}

/// Subscribers multiplexed on one epoll descriptor, served by one thread. Every field is guarded
/// by `lock`: the loop holds it while it handles a batch of events, and the scenario driver
/// takes it to start openings, reset counters and read results.
final class SubscriberLoop: @unchecked Sendable {
    let lock = NSLock()
    private let epfd = sc_epoll_create()
    /// Wakes the loop when the driver starts an opening (so every loop starts at once).
    private let wake = sc_eventfd()
    private let host: String
    /// The servers' ports; connections go to them in turn (one port but for three-servers).
    private let ports: [Int]
    private var nextPort = 0
    private let target: Target
    /// The upgrade request for each port (its Host header).
    private let upgrades: [[UInt8]]
    private var conns: [Subscriber?] = Array(repeating: nil, count: 1 << 16)
    private var scratch: UnsafeMutablePointer<UInt8>
    private var scratchCapacity = 1 << 18

    // Openings in progress.
    private var toOpen = 0
    private var pending = 0
    private var window = 1_024
    private var subscribeFrame: [UInt8] = []
    /// Tokens for the next connections, one each (the read storm); empty = the loop's token.
    private var tokens: [String] = []
    private var nextToken = 0
    private(set) var open = OpenStats()

    // Read storm.
    private var markMessageID = ""
    private var markNeedle: Needle?
    private var answering = false
    private var marksToSend = false
    private(set) var marks = MarkStats()

    // Traffic.
    private(set) var traffic = TrafficStats()
    /// Sequence number before the scenario; a message with seq s is bit s - base - 1.
    private var base: Int64 = 0
    /// Subscribers the server closed since the last reset (their losses still count).
    private var closedDuringScenario: [Subscriber] = []
    private(set) var live = 0
    private var stopped = false

    /// flatout-bounded: how many subscribers of this loop have each message (by index), and how
    /// many messages every one of them has; the publisher reads `progress`.
    private var tracking = false
    private var haveCount: [Int32] = []
    private var trackedSubscribers = 0
    private var trackMark = 0
    let progress = Progress()

    init(host: String, ports: [Int], token: String, target: Target = .staffcast) {
        self.host = host
        self.ports = ports
        self.target = target
        upgrades = ports.map { upgradeRequest(target: target, host: host, port: $0, token: token) }
        scratch = .allocate(capacity: scratchCapacity)
        _ = sc_epoll_ctl(epfd, 1, wake, UInt32(SC_EV_IN))
    }

    func start() {
        let t = Thread { [self] in run() }
        t.name = "subscribers"
        t.start()
    }

    func stop() {
        lock.lock()
        stopped = true
        lock.unlock()
        sc_eventfd_signal(wake)
    }

    // MARK: driver side (call with `lock` held)

    /// Starts opening `count` connections, at most `window` handshakes at once, each
    /// subscribing to `event` with `since_seq` (so a subscribe brings no history).
    /// `tokens`: one per connection, in order (else every connection uses the loop's token).
    func beginOpening(_ count: Int, event: String, sinceSeq: Int64, window: Int, tokens: [String] = []) {
        self.tokens = tokens
        nextToken = 0
        toOpen += count
        self.window = max(1, window)
        open = OpenStats()
        open.requested = count
        subscribeFrame = clientFrame(text: #"{"op":"subscribe","ref":"s","event_id":"\#(event)","since_seq":\#(sinceSeq)}"#)
        sc_eventfd_signal(wake)
    }

    /// Every subscribed connection sends `mark_read` of `messageID`, all in one go on the loop's
    /// thread as soon as it wakes (the driver calls this on every loop, then they run at once).
    /// `answering`: each sends `answer` of the poll instead (option 0, "I am safe", but every
    /// 20th connection option 1), and its reply is `answered`.
    func beginMarking(messageID: String, answering: Bool = false) {
        self.answering = answering
        markMessageID = messageID
        markNeedle = Needle(messageID)
        marks = MarkStats()
        for case let c? in conns { c.markSentNs = 0; c.readReplies = 0 }
        marksToSend = true
        sc_eventfd_signal(wake)
    }

    /// Subscribed connections that sent a `mark_read` and have no `read` reply yet.
    var marksUnanswered: Int { conns.reduce(0) { $0 + ($1.map { $0.markSentNs > 0 && $0.readReplies == 0 && $0.state == .subscribed ? 1 : 0 } ?? 0) } }

    /// Forgets every counter of the last scenario; messages with seq ≤ `base` are stale.
    func resetTraffic(base: Int64, track: Bool = false) {
        self.base = base
        traffic = TrafficStats()
        traffic.perServer = Array(repeating: 0, count: ports.count)
        closedDuringScenario = []
        for case let c? in conns { c.received.removeAll() }
        tracking = track
        haveCount = []
        trackedSubscribers = subscribedNow
        trackMark = 0
        // A loop without subscribers holds nobody back.
        progress.set(trackedSubscribers == 0 ? Int.max / 2 : 0)
    }

    /// Closes every connection with a reset.
    func closeAll() {
        for case let c? in conns { finish(c) }
        toOpen = 0
        pending = 0
        closedDuringScenario = []
    }

    /// Subscribed connections per server (an index into the ports).
    var subscribedPerServer: [Int] {
        var n = Array(repeating: 0, count: ports.count)
        for case let c? in conns where c.state == .subscribed { n[c.server] += 1 }
        return n
    }

    var subscribedNow: Int { conns.reduce(0) { $0 + ($1?.state == .subscribed ? 1 : 0) } }

    /// Losses against the set of acknowledged sequence numbers (relative to `base`).
    func losses(acked: Bitset) -> (lost: Int, lostOnClosed: Int, missedSubscribers: Int, unacked: Int) {
        var lost = 0, onClosed = 0, missed = 0, unacked = 0
        for case let c? in conns where c.state == .subscribed {
            let m = c.received.missing(of: acked)
            lost += m
            if m > 0 { missed += 1 }
            unacked += acked.missing(of: c.received)
        }
        for c in closedDuringScenario {
            let m = c.received.missing(of: acked)
            onClosed += m
            if m > 0 { missed += 1 }
        }
        return (lost, onClosed, missed, unacked)
    }

    // MARK: loop

    private func run() {
        var fds = [Int32](repeating: 0, count: 1_024)
        var evs = [UInt32](repeating: 0, count: 1_024)
        while true {
            lock.lock()
            if stopped { lock.unlock(); break }
            pumpOpens()
            if marksToSend { pumpMarks() }
            lock.unlock()
            // Openings continue when handshakes finish (events) or the driver signals `wake`.
            let n = Int(sc_epoll_wait2(epfd, &fds, &evs, 1_024, 50))
            if n <= 0 { continue }
            lock.lock()
            for i in 0..<n { handle(fds[i], evs[i]) }
            lock.unlock()
        }
    }

    private func pumpOpens() {
        while toOpen > 0 && pending < window {
            toOpen -= 1
            let server = nextPort
            nextPort = (nextPort + 1) % ports.count
            let fd = Wire.connect(host, ports[server])
            if fd < 0 {
                open.fail("connect: \(String(cString: strerror(-fd)))")
                continue
            }
            if open.firstConnectNs == 0 { open.firstConnectNs = monoNs() }
            let c = Subscriber(fd: fd)
            c.server = server
            if nextToken < tokens.count {
                c.upgrade = upgradeRequest(host: host, port: ports[server], token: tokens[nextToken])
                nextToken += 1
            }
            if Int(fd) >= conns.count { conns += Array(repeating: nil, count: Int(fd) + 1_024 - conns.count) }
            conns[Int(fd)] = c
            live += 1
            pending += 1
            open.opened += 1
            _ = sc_epoll_ctl(epfd, 1, fd, UInt32(SC_EV_IN | SC_EV_OUT))
        }
    }

    private func pumpMarks() {
        marksToSend = false
        let prefix = answering ? #"{"op":"answer","message_id":"\#(markMessageID)","ref":"m"#
            : #"{"op":"mark_read","message_id":"\#(markMessageID)","ref":"m"#
        marks.firstSendNs = monoNs()
        for case let c? in conns where c.state == .subscribed {
            c.markSentNs = monoNs()
            let option = answering ? #","option":\#(c.fd % 20 == 0 ? 1 : 0)"# : ""
            write(c, clientFrame(text: prefix + "\(c.fd)\"" + option + "}"))
            marks.sent += 1
        }
        marks.lastSendNs = monoNs()
    }

    private func handle(_ fd: Int32, _ ev: UInt32) {
        if fd == wake { sc_eventfd_drain(wake); return }
        guard Int(fd) < conns.count, let c = conns[Int(fd)] else { return }
        switch c.state {
        case .connecting:
            if ev & UInt32(SC_EV_ERR | SC_EV_HUP) != 0 {
                let e = sc_so_error(fd)
                fail(c, "connect: \(String(cString: strerror(e != 0 ? e : ECONNRESET)))")
            } else if ev & UInt32(SC_EV_OUT) != 0 {
                c.state = .handshake
                _ = sc_epoll_ctl(epfd, 3, fd, UInt32(SC_EV_IN))
                write(c, c.upgrade ?? upgrades[c.server])
            }
        case .handshake, .open, .subscribed:
            if ev & UInt32(SC_EV_OUT) != 0 && !c.out.isEmpty { flush(c) }
            if c.state != .closed && ev & UInt32(SC_EV_IN | SC_EV_ERR | SC_EV_HUP) != 0 { readable(c) }
        case .closed:
            break
        }
    }

    private func ensureScratch(_ n: Int) {
        guard n > scratchCapacity else { return }
        var cap = scratchCapacity
        while cap < n { cap *= 2 }
        let bigger = UnsafeMutablePointer<UInt8>.allocate(capacity: cap)
        scratch.deallocate()
        scratch = bigger
        scratchCapacity = cap
    }

    private func readable(_ c: Subscriber) {
        let have = c.partial.count
        ensureScratch(have + 65_536)
        if have > 0 { c.partial.withUnsafeBufferPointer { scratch.update(from: $0.baseAddress!, count: have) } }
        let got = Wire.recv(c.fd, scratch + have, scratchCapacity - have)
        if got == 0 { dropped(c, "ended without a close frame"); return }
        if got < 0 {
            if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { return }
            dropped(c, String(cString: strerror(errno)))
            return
        }
        let now = monoNs()
        let wall = realNs()
        let total = have + got
        var offset = 0
        if c.state == .handshake {
            let end = Needles.headEnd.find(scratch, total)
            if end < 0 {
                if total > 16_384 { fail(c, "response head too long") } else { c.partial = Array(UnsafeBufferPointer(start: scratch, count: total)) }
                return
            }
            // "HTTP/1.1 101 …": checked by bytes (a full parse costs more than the rest of a
            // handshake, which matters when 10,000 of them should fit in 0.3 s).
            let switching = end >= 12 && scratch[9] == 0x31 && scratch[10] == 0x30 && scratch[11] == 0x31
            guard switching else {
                let status = HTTPHead.parse(scratch, total)?.status ?? 0
                let body = String(decoding: UnsafeBufferPointer(start: scratch + end + 4, count: min(160, total - end - 4)), as: UTF8.self)
                fail(c, "upgrade refused: HTTP \(status) \(body)")
                return
            }
            offset = end + 4
            c.state = .open
            c.subscribeTries = 1
            switch target {
            case .staffcast: write(c, subscribeFrame)
            case .nchan: subscribed(c, now) // nchan answers 101 once the subscriber is on the channel
            case .nats: write(c, natsSubscribe.withUnsafeBytes { clientFrame(opcode: 0x1, $0) })
            }
            if c.state == .closed { return }
        }
        let used = splitFrames(scratch + offset, total - offset) { fin, opcode, payload, len in
            frame(c, fin, opcode, payload, len, now, wall)
            return c.state != .closed
        }
        if c.state == .closed { return }
        offset += used
        if offset < total {
            c.partial = Array(UnsafeBufferPointer(start: scratch + offset, count: total - offset))
        } else if have > 0 {
            c.partial = []
        }
    }

    private func frame(_ c: Subscriber, _ fin: Bool, _ opcode: UInt8, _ p: UnsafePointer<UInt8>, _ len: Int,
                       _ now: Int64, _ wall: Int64) {
        switch opcode {
        case 0x1 where target == .staffcast:
            if fin { text(c, p, len, now, wall) } else { c.fragment = Array(UnsafeBufferPointer(start: p, count: len)) }
        case 0x0 where target == .staffcast:
            c.fragment = (c.fragment ?? []) + UnsafeBufferPointer(start: p, count: len)
            if fin, let whole = c.fragment {
                c.fragment = nil
                whole.withUnsafeBufferPointer { text(c, $0.baseAddress!, $0.count, now, wall) }
            }
        case 0x0, 0x1, 0x2:
            // The peers' data (staffcast's text frames are handled above; binary ones ignored).
            if target != .staffcast { peerData(c, fin, opcode, p, len, now) }
        case 0x8:
            let code = len >= 2 ? Int(p[0]) << 8 | Int(p[1]) : 1005
            c.closeCode = code
            traffic.closedByServer[code, default: 0] += 1
            if c.state != .subscribed {
                let reason = len > 2 ? String(decoding: UnsafeBufferPointer(start: p + 2, count: len - 2), as: UTF8.self) : ""
                fail(c, "closed \(code) \(reason)")
            } else {
                closedDuringScenario.append(c)
                finish(c)
            }
        case 0x9:
            traffic.pings += 1
            write(c, clientFrame(opcode: 0xA, UnsafeRawBufferPointer(start: p, count: len)))
        default:
            break
        }
    }

    private func text(_ c: Subscriber, _ p: UnsafePointer<UInt8>, _ len: Int, _ now: Int64, _ wall: Int64) {
        var at = Needles.op.find(p, min(len, 512))
        if at < 0 { at = Needles.op.find(p, len) }
        guard at >= 0 else { return }
        let q = p + at + Needles.op.count
        let rest = len - at - Needles.op.count
        if Needles.message.isPrefix(of: q, rest) {
            message(c, p, len, now, wall)
        } else if Needles.subscribed.isPrefix(of: q, rest) {
            history(c, p, len)
            if c.state == .open { subscribed(c, now) }
        } else if answering ? Needles.answered.isPrefix(of: q, rest) : Needles.read.isPrefix(of: q, rest) {
            c.readReplies += 1
            if c.readReplies > 1 { marks.duplicateReplies += 1; return }
            marks.replies += 1
            marks.lastReplyNs = now
            if c.markSentNs > 0 { marks.markToReply.add(us: (now - c.markSentNs) / 1_000) }
            if let needle = markNeedle, needle.find(p, len) < 0 { marks.wrongMessage += 1 }
        } else if Needles.error.isPrefix(of: q, rest) {
            let code = shortString(after: Needles.code, in: p, len) ?? "?"
            if c.state == .subscribed && c.markSentNs > 0 && c.readReplies == 0 {
                // The answer to this connection's mark_read.
                c.readReplies = 1
                marks.errors[code, default: 0] += 1
                if marks.errorSample == nil { marks.errorSample = String(decoding: UnsafeBufferPointer(start: p, count: min(len, 240)), as: UTF8.self) }
                marks.lastReplyNs = now
                return
            }
            if c.state == .open {
                // The protocol's advice for `unavailable` (and a fair retry for the rest): subscribe again.
                if c.subscribeTries < 10 {
                    c.subscribeTries += 1
                    open.subscribeRetries += 1
                    write(c, subscribeFrame)
                } else {
                    fail(c, "subscribe refused: \(code)")
                }
            } else {
                traffic.errors[code, default: 0] += 1
            }
        } else if Needles.revoked.isPrefix(of: q, rest) {
            traffic.revoked += 1
        }
    }

    private func subscribed(_ c: Subscriber, _ now: Int64) {
        c.state = .subscribed
        pending -= 1
        open.subscribed += 1
        open.lastSubscribedNs = now
    }

    /// One delivery of the message with this index (seq - base - 1; the peers' `n`).
    @inline(__always)
    private func delivered(_ c: Subscriber, _ index: Int, _ now: Int64) {
        traffic.deliveries += 1
        if traffic.firstDeliveryNs == 0 { traffic.firstDeliveryNs = now }
        traffic.lastDeliveryNs = now
        if c.server < traffic.perServer.count { traffic.perServer[c.server] += 1 }
        guard c.received.insert(index) else { traffic.duplicates += 1; return }
        guard tracking else { return }
        if index >= haveCount.count { haveCount += Array(repeating: 0, count: max(index + 1 - haveCount.count, 4_096)) }
        haveCount[index] += 1
        // Counted in any order (a gap in seqs must not stall the publisher).
        if Int(haveCount[index]) == trackedSubscribers {
            trackMark += 1
            progress.set(trackMark)
        }
    }

    // MARK: the peers (Target.swift)

    /// A data frame from nchan (the message body as posted) or NATS (protocol bytes).
    private func peerData(_ c: Subscriber, _ fin: Bool, _ opcode: UInt8, _ p: UnsafePointer<UInt8>, _ len: Int, _ now: Int64) {
        if target == .nchan {
            // nchan sends each message as one frame; a fragmented one is put together first.
            if opcode != 0x0 && fin { peerMessage(c, p, len, now); return }
            c.fragment = (opcode == 0x0 ? c.fragment ?? [] : []) + UnsafeBufferPointer(start: p, count: len)
            if fin, let whole = c.fragment {
                c.fragment = nil
                whole.withUnsafeBufferPointer { peerMessage(c, $0.baseAddress!, $0.count, now) }
            }
            return
        }
        func ops(_ q: UnsafePointer<UInt8>, _ n: Int) -> Int {
            splitNATS(q, n) { op in
                switch op {
                case .msg(let payload, let length): peerMessage(c, payload, length, now)
                case .ping: write(c, Array("PONG\r\n".utf8).withUnsafeBytes { clientFrame(opcode: 0x1, $0) })
                case .pong: if c.state == .open { subscribed(c, now) }
                case .ok, .info: break
                case .err(let line): if c.state == .open { fail(c, "NATS: \(line)") } else { traffic.errors[line, default: 0] += 1 }
                }
            }
        }
        if c.stream.isEmpty {
            let used = ops(p, len)
            if used < len && c.state != .closed { c.stream = Array(UnsafeBufferPointer(start: p + used, count: len - used)) }
        } else {
            c.stream += UnsafeBufferPointer(start: p, count: len)
            let used = c.stream.withUnsafeBufferPointer { ops($0.baseAddress!, $0.count) }
            if c.state != .closed { c.stream.removeFirst(used) }
        }
    }

    /// `bench-t=<ns> n=<i>`: the delivery of index i.
    @inline(__always)
    private func peerMessage(_ c: Subscriber, _ p: UnsafePointer<UInt8>, _ len: Int, _ now: Int64) {
        guard c.state == .subscribed, let n = integer(after: Needles.index, in: p, len) else { return }
        delivered(c, Int(n), now)
        if let stamp = integer(after: Needles.stamp, in: p, len) {
            traffic.sendToReceipt.add(us: (now - stamp) / 1_000)
        }
    }

    @inline(__always)
    private func message(_ c: Subscriber, _ p: UnsafePointer<UInt8>, _ len: Int, _ now: Int64, _ wall: Int64) {
        guard let seq = integer(after: Needles.seq, in: p, len) else { return }
        let index = Int(seq - base - 1)
        if index < 0 { traffic.stale += 1; return }
        delivered(c, index, now)
        if let stamp = integer(after: Needles.stamp, in: p, len) {
            traffic.sendToReceipt.add(us: (now - stamp) / 1_000)
        }
        let at = Needles.sentAt.find(p, len)
        if at >= 0, let sent = rfc3339Ns(p + at + Needles.sentAt.count, len - at - Needles.sentAt.count) {
            traffic.commitToReceipt.add(us: (wall - sent) / 1_000)
        }
    }

    /// Marks the messages a `subscribed` reply carries (none with since_seq = the last seq).
    private func history(_ c: Subscriber, _ p: UnsafePointer<UInt8>, _ len: Int) {
        var o = 0
        while o < len {
            let at = Needles.seq.find(p + o, len - o)
            if at < 0 { break }
            o += at + Needles.seq.count
            guard let seq = integer(at: 0, in: p + o, len - o) else { continue }
            traffic.historyMessages += 1
            let index = Int(seq - base - 1)
            if index >= 0 && !c.received.insert(index) { traffic.duplicates += 1 }
        }
    }

    // MARK: writing and closing

    private func write(_ c: Subscriber, _ bytes: [UInt8]) {
        if !c.out.isEmpty { c.out += bytes; return }
        let n = bytes.withUnsafeBytes { Wire.send(c.fd, $0.baseAddress, $0.count) }
        if n == bytes.count { return }
        if n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR {
            dropped(c, "send: \(String(cString: strerror(errno)))")
            return
        }
        c.out = Array(bytes[max(0, n)...])
        _ = sc_epoll_ctl(epfd, 3, c.fd, UInt32(SC_EV_IN | SC_EV_OUT))
    }

    private func flush(_ c: Subscriber) {
        let n = c.out.withUnsafeBytes { Wire.send(c.fd, $0.baseAddress, $0.count) }
        if n < 0 {
            if errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR { dropped(c, "send: \(String(cString: strerror(errno)))") }
            return
        }
        c.out.removeFirst(n)
        if c.out.isEmpty { _ = sc_epoll_ctl(epfd, 3, c.fd, UInt32(SC_EV_IN)) }
    }

    /// The connection ended without a close frame.
    private func dropped(_ c: Subscriber, _ reason: String) {
        if c.state == .subscribed {
            c.closeCode = -1
            traffic.closedByServer[-1, default: 0] += 1
            closedDuringScenario.append(c)
            finish(c)
        } else {
            fail(c, reason)
        }
    }

    /// A connection that never got to `subscribed`.
    private func fail(_ c: Subscriber, _ reason: String) {
        open.fail(reason.count > 140 ? String(reason.prefix(140)) + "…" : reason)
        finish(c)
    }

    private func finish(_ c: Subscriber) {
        guard c.state != .closed else { return }
        if c.state != .subscribed { pending -= 1 } else if tracking { trackedSubscribers -= 1 }
        c.state = .closed
        _ = sc_epoll_ctl(epfd, 2, c.fd, 0)
        Wire.closeReset(c.fd)
        conns[Int(c.fd)] = nil
        live -= 1
    }
}

/// How many messages every subscriber of a loop has (flatout-bounded), written by
/// the loop's thread and read by the publisher's without waiting for the loop's lock.
final class Progress: @unchecked Sendable {
    private let lock = NSLock()
    private var mark = 0
    var value: Int { lock.lock(); defer { lock.unlock() }; return mark }
    func set(_ v: Int) { lock.lock(); mark = v; lock.unlock() }
}
