import CBenchEpoll
import Foundation
import Glibc

/// Reading: bytes to frames, frames to what the scenario counts (messages, replies, the peers' framing).
extension SubscriberLoop {
    func readable(_ c: Subscriber) {
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
            case .staffcast: if subscribeQuery.isEmpty { write(c, subscribeFrame) } // else `subscribed` follows by itself
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

    func frame(_ c: Subscriber, _ fin: Bool, _ opcode: UInt8, _ p: UnsafePointer<UInt8>, _ len: Int,
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

    func text(_ c: Subscriber, _ p: UnsafePointer<UInt8>, _ len: Int, _ now: Int64, _ wall: Int64) {
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

    func subscribed(_ c: Subscriber, _ now: Int64) {
        c.state = .subscribed
        pending -= 1
        open.subscribed += 1
        open.lastSubscribedNs = now
    }

    /// One delivery of the message with this index (seq - base - 1; the peers' `n`).
    @inline(__always)
    func delivered(_ c: Subscriber, _ index: Int, _ now: Int64) {
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
    func peerData(_ c: Subscriber, _ fin: Bool, _ opcode: UInt8, _ p: UnsafePointer<UInt8>, _ len: Int, _ now: Int64) {
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
    func peerMessage(_ c: Subscriber, _ p: UnsafePointer<UInt8>, _ len: Int, _ now: Int64) {
        guard c.state == .subscribed, let n = integer(after: Needles.index, in: p, len) else { return }
        delivered(c, Int(n), now)
        if let stamp = integer(after: Needles.stamp, in: p, len) {
            traffic.sendToReceipt.add(us: (now - stamp) / 1_000)
        }
    }

    @inline(__always)
    func message(_ c: Subscriber, _ p: UnsafePointer<UInt8>, _ len: Int, _ now: Int64, _ wall: Int64) {
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
    func history(_ c: Subscriber, _ p: UnsafePointer<UInt8>, _ len: Int) {
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
}
