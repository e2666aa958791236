import CBenchEpoll
import Foundation
import Glibc

/// Subscribers multiplexed on one epoll descriptor, served by one thread. Every field is guarded
/// by `lock`: the loop holds it while it handles a batch of events, and the scenario driver
/// takes it to start openings, reset counters and read results.
final class SubscriberLoop: @unchecked Sendable {
    let lock = NSLock()
    let epfd = sc_epoll_create()
    /// Wakes the loop when the driver starts an opening (so every loop starts at once).
    let wake = sc_eventfd()
    let host: String
    /// The servers' ports; connections go to them in turn (one port but for three-servers).
    let ports: [Int]
    var nextPort = 0
    let target: Target
    /// The upgrade request for each port (its Host header).
    var upgrades: [[UInt8]]
    /// The subscribers' token (unless `tokens` gives one per connection).
    let token: String
    var conns: [Subscriber?] = Array(repeating: nil, count: 1 << 16)
    var scratch: UnsafeMutablePointer<UInt8>
    var scratchCapacity = 1 << 18

    // Openings in progress.
    var toOpen = 0
    var pending = 0
    var window = 1_024
    var subscribeFrame: [UInt8] = []
    /// Set by the driver before opening: subscribe in the upgrade's URL (staffcast).
    var subscribeInURL = true
    /// The upgrade's query that subscribes (empty: a `subscribe` frame after the 101).
    var subscribeQuery = ""
    /// Tokens for the next connections, one each (the read storm); empty = the loop's token.
    var tokens: [String] = []
    var nextToken = 0
    var open = OpenStats()

    // Read storm.
    var markMessageID = ""
    var markNeedle: Needle?
    var answering = false
    var marksToSend = false
    var marks = MarkStats()

    // Traffic.
    var traffic = TrafficStats()
    /// Sequence number before the scenario; a message with seq s is bit s - base - 1.
    var base: Int64 = 0
    /// Subscribers the server closed since the last reset (their losses still count).
    var closedDuringScenario: [Subscriber] = []
    var live = 0
    var stopped = false

    /// flatout-bounded: how many subscribers of this loop have each message (by index), and how
    /// many messages every one of them has; the publisher reads `progress`.
    var tracking = false
    var haveCount: [Int32] = []
    var trackedSubscribers = 0
    var trackMark = 0
    let progress = Progress()

    init(host: String, ports: [Int], token: String, target: Target = .staffcast) {
        self.host = host
        self.ports = ports
        self.target = target
        self.token = token
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
        if target == .staffcast {
            // In the URL: the server answers the upgrade with `hello` and `subscribed` at once.
            subscribeQuery = subscribeInURL ? "subscribe=\(event)&since_seq=\(sinceSeq)&ref=s" : ""
            upgrades = ports.map { upgradeRequest(host: host, port: $0, token: token, query: subscribeQuery) }
        }
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

    func run() {
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

    func pumpOpens() {
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
                c.upgrade = upgradeRequest(host: host, port: ports[server], token: tokens[nextToken], query: subscribeQuery)
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

    func pumpMarks() {
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

    func handle(_ fd: Int32, _ ev: UInt32) {
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

    func ensureScratch(_ n: Int) {
        guard n > scratchCapacity else { return }
        var cap = scratchCapacity
        while cap < n { cap *= 2 }
        let bigger = UnsafeMutablePointer<UInt8>.allocate(capacity: cap)
        scratch.deallocate()
        scratch = bigger
        scratchCapacity = cap
    }
}
