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
        WindowedSender.connect(host: host, port: port) { s in
            // CONNECT, then PING: the PONG says the server took it (the +OK of CONNECT comes first).
            guard Net.writeAll(s.fd, Array("CONNECT {\"verbose\":true,\"pedantic\":false,\"protocol\":1}\r\nPING\r\n".utf8)) else {
                s.r.failure = "NATS CONNECT: write failed"; return
            }
            var ready = false
            var refused: String?
            let deadline = monoNs() + 10_000_000_000
            while !ready && refused == nil && monoNs() < deadline {
                guard Net.read(s.fd, into: &s.rx, timeoutMs: 100) != nil else { break }
                let used = s.rx.withUnsafeBufferPointer { b in
                    splitNATS(b.baseAddress!, b.count) { op in
                        if case .pong = op { ready = true }
                        if case .err(let line) = op { refused = line }
                    }
                }
                s.rx.removeFirst(used)
            }
            guard ready else { s.r.failure = "NATS publisher: \(refused ?? "no PONG to CONNECT within 10 s")"; return }

            // The oldest PUB in flight: the one the next +OK or -ERR answers.
            var ackHead = 0
            s.run(plan, window: window, limit: limit, unit: "PUBs", answer: "+OK", closeLeavesUnanswered: true,
                  frame: { n, now in
                      let text = messageText(n, now: now)
                      return Array("PUB bench \(text.utf8.count)\r\n\(text)\r\n".utf8)
                  },
                  receive: { got in
                      var pongs = 0
                      let used = s.rx.withUnsafeBufferPointer { b in
                          splitNATS(b.baseAddress!, b.count) { op in
                              switch op {
                              case .ok:
                                  guard ackHead < s.sendTimes.count else { return }
                                  s.r.sendToAck.add(us: (got - s.sendTimes[ackHead]) / 1_000)
                                  _ = s.r.acks.insert(ackHead)
                                  ackHead += 1
                                  s.inFlight -= 1
                                  s.r.acked += 1
                                  s.r.lastAckNs = got
                                  s.lastProgress = got
                              case .err(let line):
                                  // -ERR answers the oldest PUB in flight (a refusal), or ends the connection.
                                  if ackHead < s.sendTimes.count { ackHead += 1; s.inFlight -= 1 }
                                  s.lastProgress = got
                                  s.r.error(String(line.prefix(60)), line)
                              case .ping: pongs += 1
                              case .pong, .info, .msg: break
                              }
                          }
                      }
                      s.rx.removeFirst(used)
                      for _ in 0..<pongs { s.out += Array("PONG\r\n".utf8) }
                      return true
                  })
        }
    }
}
