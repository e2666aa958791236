import CBenchEpoll
import Foundation
import Glibc

/// The send loop of a publisher on one connection with at most `window` sends unanswered
/// (`WebSocketPublisher`, `NATSPublisher`): sends by the plan (paced, flat out or a count,
/// bounded by `limit`), writes what waits in `out`, gives up when answers stop, and hands what
/// it reads to the protocol's `receive`. Only the framing of a send and of its answer differ.
/// Used on the publisher's own thread only.
final class WindowedSender {
    let fd: Int32
    var r = PublishResult()
    var rx: [UInt8] = []
    var out: [UInt8] = []
    /// The send time of message n, at index n.
    var sendTimes: [Int64] = []
    /// Sends written and not yet answered (`receive` counts the answers down).
    var inFlight = 0
    /// When the last answer came (`receive` sets it).
    var lastProgress: Int64 = 0

    private init(fd: Int32) { self.fd = fd }

    /// Connects to `host:port`, runs `body` on the connection, and closes it (with a reset).
    static func connect(host: String, port: Int, _ body: (WindowedSender) -> Void) -> PublishResult {
        switch Net.connect(host: host, port: port) {
        case .failure(let e):
            var r = PublishResult()
            r.failure = e.description
            return r
        case .success(let fd):
            defer { Wire.closeReset(fd) }
            let sender = WindowedSender(fd: fd)
            body(sender)
            return sender.r
        }
    }

    /// `frame(n, now)`: the bytes that send message n. `receive(got)`: takes the answers in `rx`
    /// (read at `got`); false ends the run (it set `r.failure`). `unit` names a send in
    /// failures ("PUBs"), `answer` its answer ("+OK"); `closeLeavesUnanswered`: a closed
    /// connection counts the sends in flight as unanswered.
    func run(_ plan: PublishPlan, window: Int, limit: (() -> Int)?, unit: String, answer: String,
             closeLeavesUnanswered: Bool, frame: (Int, Int64) -> [UInt8], receive: (Int64) -> Bool) {
        var n = 0
        let start = monoNs()
        lastProgress = start
        var stopSendingAt: Int64 = 0
        let (total, interval, end) = plan.schedule(start: start)
        var next = start

        func append(_ now: Int64) {
            out += frame(n, now)
            sendTimes.append(now)
            if r.firstSendNs == 0 { r.firstSendNs = now }
            r.lastSendNs = now
            n += 1
            r.sent += 1
            inFlight += 1
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
            }
            if r.isOver(now: now, sending: sending, stoppedAt: &stopSendingAt, lastProgress: lastProgress, inFlight: inFlight,
                        unit: unit, answer: answer) { break }
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
            guard Net.read(fd, into: &rx, timeoutMs: 0) != nil else {
                r.failure = "the server closed the publisher's connection"
                if closeLeavesUnanswered { r.unanswered = inFlight }
                break
            }
            if !receive(monoNs()) { break }
        }
    }
}
