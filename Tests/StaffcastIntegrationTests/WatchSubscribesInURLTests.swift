import Foundation
import StaffcastClient
import StaffcastCore
import XCTest

/// The real `staffcast watch` (line mode) against a real server, through a relay that keeps what
/// it sent: on its first connect and on the reconnect after a dropped connection, the subscribe
/// rides in the upgrade's URL (the second with `since_seq` of the last message shown), and no
/// subscribe frame is sent.
final class WatchSubscribesInURLTests: IntegrationTestCase {
    override class var startsServer: Bool { true }

    func testWatchSubscribesInTheURLOnEveryConnectWithItsLastSeq() throws {
        let relay = try RecordingRelay(to: server.port)
        defer { relay.stop() }
        let home = NSTemporaryDirectory() + "sc-home-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: home) }
        let stdout = home + "/stdout.txt"
        FileManager.default.createFile(atPath: stdout, contents: nil)
        let watch = Process()
        watch.executableURL = URL(fileURLWithPath: CommandLineTests.binary)
        let event = fixture.event.uuidString.lowercased()
        watch.arguments = ["watch", "--server", "http://127.0.0.1:\(relay.port)", "--event", event]
        watch.environment = ProcessInfo.processInfo.environment.merging(
            ["HOME": home, "XDG_STATE_HOME": home + "/state", "STAFFCAST_TOKEN": fixture.staffToken]) { $1 }
        watch.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: stdout))
        watch.standardError = FileHandle.nullDevice
        try watch.run()
        defer { if watch.isRunning { watch.terminate() }; watch.waitUntilExit() }
        func printed(_ text: String) -> Bool { ((try? String(contentsOfFile: stdout, encoding: .utf8)) ?? "").contains(text) }

        XCTAssertTrue(waitUntil(8) { server.subscribers(fixture.event) == 1 }, "watch did not subscribe")
        let first = try fixture.store.send(as: fixture.owner, SendRequest(eventID: fixture.event, message: "Gates open"))
        XCTAssertTrue(waitUntil(8) { printed("Gates open") }, "watch did not print the message")

        // The network drops: watch reconnects (after about 1 s) and catches up from that message.
        relay.dropAll()
        XCTAssertTrue(waitUntil(15) { upgrades(relay).count == 2 && server.subscribers(fixture.event) == 1 },
                      "watch did not reconnect and subscribe again")
        let missed = try fixture.store.send(as: fixture.owner, SendRequest(eventID: fixture.event, message: "Hall B is closed"))
        XCTAssertTrue(waitUntil(8) { printed("Hall B is closed") }, "watch did not print the message after the reconnect")

        let sockets = upgrades(relay)
        XCTAssertEqual(sockets.count, 2, "one WebSocket, then one after the drop")
        for (index, socket) in sockets.enumerated() {
            let query = socket.query
            XCTAssertEqual(socket.path, "/v1/ws", socket.requestLine)
            XCTAssertEqual(query["subscribe"], event, "connect \(index + 1) subscribes in its URL: \(socket.requestLine)")
            XCTAssertFalse((query["ref"] ?? "").isEmpty, "with a ref, which its answer carries: \(socket.requestLine)")
            XCTAssertNil(query["access_token"], "the token stays in the header: \(socket.requestLine)")
            XCTAssertEqual(socket.ops.filter { $0 == "subscribe" }, [], "connect \(index + 1) sent a subscribe frame too: \(socket.ops)")
        }
        XCTAssertNil(sockets.first?.query["since_seq"], "a first start has no cursor: \(sockets[0].requestLine)")
        XCTAssertEqual(sockets.last?.query["since_seq"], String(first.seq),
                       "the reconnect asks for what came after the last message shown: \(sockets[1].requestLine)")
        XCTAssertLessThan(first.seq, missed.seq)
    }

    /// The relayed connections that upgraded to the WebSocket, each with what its client sent.
    private func upgrades(_ relay: RecordingRelay) -> [SentOverWebSocket] {
        relay.clientBytes.compactMap(SentOverWebSocket.init)
    }
}
