import Foundation
import StaffcastClient
import StaffcastCore
import StaffcastPostgres
import StaffcastServer
import XCTest

/// Live delivery during a reconnect storm: the loop runs live fan-out first and storm work in
/// slices (`ServiceLoop+Inbox`). Correctness only here (every live message reaches every
/// subscriber once, in order, while 2,000 clients connect and subscribe); how long it takes is
/// measured by `staffcast-bench storm` (bench/README.md), never asserted in a test.
final class StormPriorityTests: IntegrationTestCase {
    override func setUpWithError() throws {
        // 2,000 storm clients plus the server's own ends of them, in this one process.
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        if limit.rlim_cur < 8_192 {
            limit.rlim_cur = min(limit.rlim_max, 8_192)
            setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        }
        try super.setUpWithError()
        try startServer { $0.maxConnectionsPerUser = 5_000 }
    }

    func testLiveMessagesReachSubscribersOnceAndInOrderDuringAReconnectStorm() throws {
        // A history, so that every storm subscribe is answered with a real frame to encode and write.
        for i in 0..<50 {
            _ = try fixture.store.send(as: fixture.owner, SendRequest(eventID: fixture.event, message: "earlier \(i)"))
        }
        let subscribers = try (0..<20).map { _ in try server.connect(fixture.adminToken) }
        for s in subscribers { _ = try s.subscribe(fixture.event) }

        // The storm: 2,000 clients upgrade at once...
        let stormSize = 2_000
        var storm: [RawSocket] = []
        let key = Data((0..<16).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
        let upgrade = RawSocket.request("GET", "/v1/ws", port: server.port, headers: [
            ("Upgrade", "websocket"), ("Connection", "Upgrade"), ("Sec-WebSocket-Key", key), ("Sec-WebSocket-Version", "13"),
            ("Sec-WebSocket-Protocol", "staffcast.v1"), ("Authorization", "Bearer \(fixture.staffToken)"),
        ])
        for _ in 0..<stormSize {
            let socket = try RawSocket(port: server.port, timeout: 30)
            try socket.send(upgrade, timeout: 30)
            storm.append(socket)
        }
        for (i, socket) in storm.enumerated() {
            let response = try socket.readResponse(deadline: Date().addingTimeInterval(30))
            XCTAssertEqual(response.status, 101, "storm client \(i): \(response)")
        }
        // ...and subscribe together, while live messages are sent in between.
        let subscribe = String(decoding: try JSONSerialization.data(withJSONObject: [
            "op": "subscribe", "event_id": fixture.event.uuidString.lowercased(), "ref": "storm",
        ]), as: UTF8.self)
        var live: [StaffMessage] = []
        for (i, socket) in storm.enumerated() {
            try socket.sendWebSocketText(subscribe)
            if i % 400 == 399 {
                live.append(try fixture.store.send(as: fixture.owner, SendRequest(eventID: fixture.event, message: "live \(live.count)")))
            }
        }
        XCTAssertEqual(live.count, 5)

        // Every already-subscribed client: each live message once, in order, nothing more.
        for (n, s) in subscribers.enumerated() {
            var got: [UUID] = []
            while got.count < live.count {
                guard case .message(let m) = try s.expect("message", timeout: 30) else { return XCTFail("subscriber \(n)") }
                got.append(m.id)
            }
            XCTAssertEqual(got, live.map(\.id), "subscriber \(n)")
        }
        for s in subscribers { try s.expectSilence(0.2) }

        // The storm was real: every storm client got its own answer, and no live message twice.
        for (i, socket) in storm.enumerated() {
            var subscribed = false
            var seen: [UUID] = []
            let deadline = Date().addingTimeInterval(30)
            while !subscribed || seen.count < live.count, Date() < deadline {
                guard let frame = try socket.readWebSocketFrame(deadline: deadline) else { break }
                guard frame.opcode == 1, let decoded = try? ServerFrame.decode(frame.payload) else { continue }
                switch decoded {
                case .subscribed(let ref, _, let history, _, _):
                    XCTAssertEqual(ref, "storm")
                    subscribed = true
                    // Live messages already in the snapshot come as history, not again live.
                    seen += history.map(\.id).filter { id in live.contains { $0.id == id } }
                case .message(let m):
                    seen.append(m.id)
                default:
                    continue
                }
            }
            XCTAssertTrue(subscribed, "storm client \(i) got no answer")
            XCTAssertEqual(seen, live.map(\.id), "storm client \(i): each live message once, in order")
            if !subscribed { break }
        }
    }
}
