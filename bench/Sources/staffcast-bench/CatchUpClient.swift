import CBenchEpoll
import Foundation
import Glibc

/// A staff client that was away for a long, busy shift: it subscribes with `since_seq` and then
/// pages with `history` + `after_seq` until a page says `more: false` (docs/protocol.md,
/// catch-up). Blocking and single-threaded: it measures the server, not the client.
struct CatchUpClient {
    struct Outcome {
        /// Every seq received, in the order received.
        var seqs: [Int64] = []
        var pages = 0
        var seconds = 0.0
    }

    let host: String
    let port: Int
    let token: String
    let event: String

    func run(sinceSeq: Int64, pageLimit: Int = 200, timeout: Double = 120) -> Result<Outcome, BenchFailure> {
        let fd: Int32
        switch Net.connect(host: host, port: port) {
        case .success(let s): fd = s
        case .failure(let e): return .failure(e)
        }
        defer { Wire.close(fd) }
        let deadline = monoNs() + Int64(timeout * 1e9)
        guard Net.writeAll(fd, upgradeRequest(host: host, port: port, token: token)) else {
            return .failure(BenchFailure("catch-up: could not send the upgrade"))
        }
        var buffer: [UInt8] = []
        // The 101 head.
        while true {
            if let end = buffer.firstRange(of: Array("\r\n\r\n".utf8)) {
                let head = String(decoding: buffer[..<end.lowerBound], as: UTF8.self)
                guard head.hasPrefix("HTTP/1.1 101") else {
                    return .failure(BenchFailure("catch-up: upgrade refused: \(head.prefix(80))"))
                }
                buffer.removeSubrange(..<end.upperBound)
                break
            }
            guard monoNs() < deadline, Net.read(fd, into: &buffer, timeoutMs: 1_000) != nil else {
                return .failure(BenchFailure("catch-up: no answer to the upgrade"))
            }
        }
        let started = monoNs()
        var outcome = Outcome()
        func request(_ json: String) -> Bool { Net.writeAll(fd, clientFrame(text: json)) }
        guard request(#"{"op":"subscribe","event_id":"\#(event)","since_seq":\#(sinceSeq),"ref":"c0"}"#) else {
            return .failure(BenchFailure("catch-up: could not send subscribe"))
        }
        var message: [UInt8] = []
        while monoNs() < deadline {
            var done = false
            var failure: BenchFailure?
            let used = buffer.withUnsafeBufferPointer { b -> Int in
                guard let base = b.baseAddress else { return 0 }
                return splitFrames(base, b.count) { fin, opcode, payload, length in
                    if opcode == 0x9 { // ping: answer so the server keeps us
                        _ = Net.writeAll(fd, clientFrame(opcode: 0xA, UnsafeRawBufferPointer(start: payload, count: length)))
                        return true
                    }
                    guard opcode == 0x1 || opcode == 0x0 else { return true }
                    message += UnsafeBufferPointer(start: payload, count: length)
                    guard fin else { return true }
                    defer { message.removeAll(keepingCapacity: true) }
                    guard let frame = (try? JSONSerialization.jsonObject(with: Data(message))) as? [String: Any],
                          let type = frame["op"] as? String else { return true }
                    let page: [[String: Any]]
                    switch type {
                    case "subscribed": page = frame["history"] as? [[String: Any]] ?? []
                    case "history": page = frame["messages"] as? [[String: Any]] ?? []
                    case "error":
                        failure = BenchFailure("catch-up: server error \(frame["code"] ?? "?"): \(frame["message"] ?? "")")
                        return false
                    default: return true // live messages and the rest: not part of the catch-up
                    }
                    outcome.pages += 1
                    for m in page { if let seq = (m["seq"] as? NSNumber)?.int64Value { outcome.seqs.append(seq) } }
                    if frame["more"] as? Bool == true {
                        let after = outcome.seqs.last ?? sinceSeq
                        if !request(#"{"op":"history","event_id":"\#(event)","after_seq":\#(after),"limit":\#(pageLimit),"ref":"c\#(outcome.pages)"}"#) {
                            failure = BenchFailure("catch-up: could not send history")
                        }
                    } else {
                        done = true
                    }
                    return !done && failure == nil
                }
            }
            buffer.removeFirst(used)
            if let failure { return .failure(failure) }
            if done {
                outcome.seconds = Double(monoNs() - started) / 1e9
                return .success(outcome)
            }
            guard Net.read(fd, into: &buffer, timeoutMs: 1_000) != nil else {
                return .failure(BenchFailure("catch-up: the server closed the connection after \(outcome.pages) pages"))
            }
        }
        return .failure(BenchFailure("catch-up: not done within \(Int(timeout)) s (\(outcome.pages) pages, \(outcome.seqs.count) messages)"))
    }
}
