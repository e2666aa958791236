import Foundation
import StaffcastClient
import StaffcastCore
import XCTest

/// Every bad input of the spine issue: a clear error, nothing stored, connection and server up.
final class BadInputTests: IntegrationTestCase {
    var owner: TestSocket!

    override class var startsServer: Bool { true }

    override func setUpWithError() throws {
        try super.setUpWithError()
        owner = try server.connect(fixture.ownerToken)
    }

    var event: String { fixture.event.uuidString.lowercased() }

    /// Sends `text`, expects an error with `code`, and checks the connection still answers.
    func assertRefused(_ text: String, _ code: ErrorCode, ref: String? = nil, contains: String? = nil,
                       file: StaticString = #filePath, line: UInt = #line) throws {
        try owner.sendText(text)
        guard case .error(let gotRef, let e) = try owner.expect("error", file: file, line: line) else { return }
        XCTAssertEqual(e.code, code, e.message, file: file, line: line)
        XCTAssertEqual(gotRef, ref, file: file, line: line)
        XCTAssertFalse(e.message.isEmpty, file: file, line: line)
        if let contains { XCTAssertTrue(e.message.contains(contains), "\(e.message)", file: file, line: line) }
        try owner.send(["op": "ping", "ref": "alive"])
        XCTAssertEqual(try owner.expect("pong", file: file, line: line).ref, "alive", file: file, line: line)
    }

    func testMalformedFramesGetErrorsAndStoreNothing() throws {
        try assertRefused("{not json", .invalid, contains: "JSON")
        try assertRefused("[1,2]", .invalid, contains: "object")
        try assertRefused(#"{"ref":"x"}"#, .invalid, ref: "x", contains: "op")
        try assertRefused(#"{"op":"dance","ref":"d"}"#, .invalid, ref: "d", contains: "Unknown op")
        try assertRefused(#"{"op":42}"#, .invalid)
        try assertRefused(#"{"op":"subscribe","event_id":17,"ref":"t"}"#, .invalid, ref: "t", contains: "event_id")
        try assertRefused(#"{"op":"subscribe","event_id":"not-a-uuid"}"#, .invalid, contains: "not a UUID")
        try assertRefused(#"{"op":"subscribe","event_id":"\#(event)","since_seq":"five"}"#, .invalid, contains: "since_seq")
        try assertRefused(#"{"op":"subscribe","event_id":"\#(event)","since_seq":true}"#, .invalid, contains: "since_seq")
        try assertRefused(#"{"op":"history","event_id":"\#(event)","limit":500}"#, .invalid, contains: "200")
        try assertRefused(#"{"op":"mark_read","message_id":"nope"}"#, .invalid)
        XCTAssertEqual(fixture.messageCount, 0)
    }

    func testInvalidSendsStoreNothing() throws {
        try assertRefused(#"{"op":"send","event_id":"\#(event)","message":""}"#, .invalid, contains: "empty")
        try assertRefused(#"{"op":"send","event_id":"\#(event)","message":"   "}"#, .invalid, contains: "empty")
        try assertRefused(#"{"op":"send","event_id":"\#(event)"}"#, .invalid, contains: "message")
        let big = String(repeating: "x", count: 4_097)
        try assertRefused(#"{"op":"send","event_id":"\#(event)","message":"\#(big)"}"#, .tooLarge, contains: "4096")
        try assertRefused(#"{"op":"send","event_id":"\#(event)","message":"hi","expires_in_minutes":0}"#, .invalid, contains: "expires_in_minutes")
        try assertRefused(#"{"op":"send","event_id":"\#(event)","message":"hi","expires_in_minutes":43201}"#, .invalid)
        try assertRefused(#"{"op":"send","event_id":"\#(event)","message":"hi","expires_in_minutes":1.5}"#, .invalid)
        try assertRefused(#"{"op":"send","event_id":"\#(event)","message":"hi","message_type":"gossip"}"#, .invalid, contains: "broadcast")
        try assertRefused(#"{"op":"send","event_id":"\#(event)","message":"hi","priority":"extreme"}"#, .invalid, contains: "urgent")
        try assertRefused(#"{"op":"send","event_id":"\#(UUID().uuidString)","message":"hi"}"#, .notFound)
        XCTAssertEqual(fixture.messageCount, 0)
        // Exactly 4,096 bytes (multi-byte characters count as bytes) is accepted.
        let edge = String(repeating: "é", count: 2_048)
        try owner.send(["op": "send", "event_id": event, "message": edge])
        XCTAssertEqual(try owner.expect("sent").message?.message, edge)
        XCTAssertEqual(fixture.messageCount, 1)
    }

    func testOversizedFrameGetsTooLargeAndConnectionStays() throws {
        let huge = #"{"op":"send","event_id":"\#(event)","message":""# + String(repeating: "y", count: 70_000) + #""}"#
        try assertRefused(huge, .tooLarge, contains: "65536")
        XCTAssertEqual(fixture.messageCount, 0)
    }

    func testBinaryFrameIsRefused() throws {
        try owner.client.sendFrame(opcode: 0x2, payload: [1, 2, 3])
        guard case .error(_, let e) = try owner.expect("error") else { return }
        XCTAssertEqual(e.code, .invalid)
    }

    func testTextThatIsNotUTF8ClosesWith1007AndStoresNothing() throws {
        // RFC 6455 8.1 (libwebsockets' LWS_SERVER_OPTION_VALIDATE_UTF8; the same rule as wss,
        // TLSTests.testWSSFramingRulesAndTheirCloseCodes).
        let bytes = Array(#"{"op":"send","event_id":"\#(event)","message":"caf"#.utf8) + [0xC3, 0x28] + Array(#""}"#.utf8)
        try owner.client.sendFrame(opcode: 0x1, payload: bytes)
        XCTAssertEqual(try owner.closeCode(idle: 5), 1007)
        XCTAssertEqual(fixture.messageCount, 0)
        _ = try server.connect(fixture.ownerToken) // the server is fine
    }

    func testAnOutsiderCannotTellAHiddenEventFromAnUnknownOne() throws {
        let outsider = try server.connect(fixture.outsiderToken)
        let unknown = UUID().uuidString
        XCTAssertEqual(try outsider.expectError(["op": "subscribe", "event_id": event]).code, .notFound)
        XCTAssertEqual(try outsider.expectError(["op": "subscribe", "event_id": event]),
                       try outsider.expectError(["op": "subscribe", "event_id": unknown]))
        XCTAssertEqual(try outsider.expectError(["op": "history", "event_id": event]),
                       try outsider.expectError(["op": "history", "event_id": unknown]))
        XCTAssertEqual(try outsider.expectError(["op": "send", "event_id": event, "message": "hi"]),
                       try outsider.expectError(["op": "send", "event_id": unknown, "message": "hi"]))
        XCTAssertEqual(fixture.messageCount, 0)
    }

    func testWrongOrMissingTokenIsRefusedWith401BeforeUpgrade() throws {
        for headers in [[:], ["Authorization": "Bearer sc_wrongwrongwrongwrongwrongwrongwrongwrongwro"],
                        ["Authorization": "Basic abc"], ["Authorization": "Bearer \(fixture.staffToken)x"]] {
            XCTAssertThrowsError(try WebSocketClient(url: server.ws, headers: headers)) { error in
                guard case ClientError.handshake(let status, let body) = error else { return XCTFail("\(error)") }
                XCTAssertEqual(status, 401)
                XCTAssertTrue(body.contains("unauthorized"), body)
            }
        }
        XCTAssertThrowsError(try WebSocketClient(url: "ws://127.0.0.1:\(server.port)/elsewhere",
                                                 headers: ["Authorization": "Bearer \(fixture.staffToken)"])) { error in
            guard case ClientError.handshake(let status, _) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(status, 404)
        }
        // The server is still up.
        _ = try server.connect(fixture.staffToken)
    }

    func testSendRateIsLimited() throws {
        server.stop()
        server = try TestServer(conninfo: fixture.conninfo) { $0.sendBurst = 3; $0.sendRatePerSecond = 0.01 }
        owner = try server.connect(fixture.ownerToken)
        for i in 0..<3 {
            try owner.send(["op": "send", "event_id": event, "message": "m\(i)"])
            _ = try owner.expect("sent")
        }
        XCTAssertEqual(try owner.expectError(["op": "send", "event_id": event, "message": "one too many"]).code, .rateLimited)
        XCTAssertEqual(fixture.messageCount, 3)
    }
}
