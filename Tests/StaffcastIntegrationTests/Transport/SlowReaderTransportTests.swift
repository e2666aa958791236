import Foundation
import StaffcastClient
import StaffcastCore
import StaffcastPostgres
import StaffcastServer
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// A WebSocket reader that never reads is dropped while the others get everything.
final class SlowReaderTransportTests: TransportTestCase {
    /// The most a socket's kernel send buffer grows to (`tcp_wmem`'s maximum; 4 MiB by default).
    static var kernelSendBufferMax: Int {
        let text = (try? String(contentsOfFile: "/proc/sys/net/ipv4/tcp_wmem", encoding: .utf8)) ?? ""
        return text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" }).last.flatMap { Int($0) } ?? 4 << 20
    }

    /// A subscriber with a tiny receive window that never reads, while an owner sends messages
    /// of ~4 KB over HTTP: the server drops it within `writeStallTimeout` + 10 s (status stops
    /// counting it; the socket ends in EOF or a reset once read), and a normal subscriber on the
    /// same event gets every message. On loopback the server's kernel send buffer grows to
    /// `tcp_wmem`'s maximum and would swallow a small burst whole (200 messages are not a
    /// stall), so the burst is that maximum plus 2 MiB: frames must wait in the server. The
    /// queue limits are raised so that only the write-stall deadline can drop it.
    func testAWebSocketThatNeverReadsIsDroppedWhileOthersGetEverything() throws {
        let writeStallTimeout = 3.0
        let count = max(200, (Self.kernelSendBufferMax + (2 << 20)) / 4_000)
        let server = try startServer {
            $0.writeStallTimeout = writeStallTimeout
            $0.heartbeatInterval = 300 // the heartbeat must not be what closes it
            $0.outboundMaxFrames = 1_000_000 // nor the slow-client queue limits
            $0.outboundMaxBytes = 1 << 30
            $0.sendBurst = 100_000
            $0.sendRatePerSecond = 100_000
        }
        // The stalled reader: subscribes, then never reads again.
        let stalled = try RawSocket(port: server.port, receiveBuffer: 4_096)
        let upgrade = try stalled.upgrade(token: fixture.staffToken)
        XCTAssertEqual(upgrade.status, 101, "\(upgrade)")
        guard upgrade.status == 101 else { return }
        try stalled.sendWebSocketText(#"{"op":"subscribe","event_id":"\#(eventID)","ref":"stalled"}"#)
        let subscribeDeadline = Date().addingTimeInterval(10)
        var subscribed = false
        while !subscribed, let frame = try stalled.readWebSocketFrame(deadline: subscribeDeadline) {
            if frame.opcode == 0x1, (try? ServerFrame.decode(frame.payload))?.op == "subscribed" { subscribed = true }
        }
        XCTAssertTrue(subscribed, "the stalled reader's subscribe was not answered")

        // The normal subscriber, read all along on its own thread.
        let normal = try server.subscriber(fixture.adminToken, fixture.event)
        let received = Guarded<[Int64]>([])
        let readerError = Guarded<String?>(nil)
        let readerDone = DispatchSemaphore(value: 0)
        let normalBox = Unchecked(normal)
        Thread {
            let until = Date().addingTimeInterval(120)
            while Date() < until, received.value.count < count {
                do {
                    guard let frame = try normalBox.value.nextOrNil(timeout: 1) else { continue }
                    if case .message(let m) = frame { received.update { $0.append(m.seq) } }
                } catch {
                    readerError.update { $0 = "\(error)" }
                    break
                }
            }
            readerDone.signal()
        }.start()

        waitUntil(5) { connectionCount(server) == 2 }
        XCTAssertEqual(connectionCount(server), 2, "both subscribers are counted before the burst")

        let api = try server.api(fixture.ownerToken)
        var sentSeqs: [Int64] = []
        for i in 0..<count {
            let prefix = "stall \(i) "
            let text = prefix + String(repeating: "x", count: 4_000 - prefix.utf8.count)
            sentSeqs.append(try api.sendMessage(event: fixture.event, message: text, type: nil, priority: nil,
                                                expiresInMinutes: nil).seq)
        }
        let publishedAt = Date()

        // Dropped: no longer counted by status, without the test reading a byte.
        let limit = writeStallTimeout + 10
        var droppedAfter: TimeInterval?
        if waitUntil(publishedAt.addingTimeInterval(limit).timeIntervalSinceNow, poll: 0.25, { connectionCount(server) == 1 }) {
            droppedAfter = Date().timeIntervalSince(publishedAt)
        }
        XCTAssertNotNil(droppedAfter, "the reader that never reads is still counted \(limit) s after a burst of "
                        + "\(count) messages (connections: \(connectionCount(server).map(String.init) ?? "?"))")
        if droppedAfter != nil {
            // Its subscription went with it.
            func subscribers() -> Int? {
                let events = (try? status(server))?["events"] as? [[String: Any]]
                return events?.first { $0["event_id"] as? String == eventID }?["subscribers"] as? Int
            }
            waitUntil(2) { subscribers() == 1 }
            XCTAssertEqual(subscribers(), 1, "the event's subscribers once the stalled reader is gone")
        }

        // The normal subscriber got every message, once, in order, and is still connected.
        XCTAssertEqual(readerDone.wait(timeout: .now() + 60), .success, "the normal subscriber's reader did not finish")
        XCTAssertNil(readerError.value, "the normal subscriber's connection ended")
        XCTAssertEqual(received.value.count, count)
        XCTAssertEqual(received.value, sentSeqs, "every message exactly once, in seq order")
        if readerError.value == nil {
            try normal.send(["op": "ping", "ref": "still-here"])
            XCTAssertEqual(try normal.expect("pong").ref, "still-here")
        }

        // Reading at last: whatever the kernel still held, then the end of the stream.
        let (outcome, drained) = stalled.waitForClose(deadline: Date().addingTimeInterval(10))
        print("note: \(count) messages; the stalled reader was dropped \(droppedAfter.map { String(format: "%.1f s", $0) } ?? "never") "
              + "after the burst; reading it at last gave \(drained) bytes, then \(outcome)")
        XCTAssertNotEqual(outcome, .open,
                          "the stalled reader's socket is still open: \(drained) bytes read, no EOF or reset "
                          + "(kernel receive buffer \(stalled.receiveBufferSize) bytes)")
    }
}
