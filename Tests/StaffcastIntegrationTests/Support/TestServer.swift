import Foundation
import StaffcastClient
import StaffcastCore
@testable import StaffcastServer
import XCTest

/// A real staffcast server on a loopback port chosen by the kernel.
final class TestServer {
    let server: StaffcastServer
    var port: Int { server.port }
    var http: String { "http://127.0.0.1:\(port)" }
    var ws: String { "ws://127.0.0.1:\(port)/v1/ws" }

    init(conninfo: String, configure: (inout ServerConfiguration) -> Void = { _ in }) throws {
        var c = ServerConfiguration()
        c.host = "127.0.0.1"
        c.port = 0
        c.databaseWorkers = 2
        c.listenerPollInterval = 0.5
        c.shutdownGrace = 1
        c.opsToken = "ops-secret"
        configure(&c)
        // Served as the login `staffcast serve` uses (sql/006_roles.sql), never as the owner.
        server = StaffcastServer(configuration: c, conninfo: TestDatabase.serverLogin(conninfo), logger: TestDatabase.logger)
        try server.start()
    }

    func stop() { server.stop() }

    func api(_ token: String?) throws -> APIClient { try APIClient(server: http, token: token) }

    /// `/v1/status` with the ops token: what the server itself counts right now.
    func status() throws -> [String: Any] {
        let data = try api("ops-secret").call("GET", "/v1/status")
        return try XCTUnwrap(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    /// How many valid tokens the server's own table holds (new ones arrive through the change feed).
    var validTokens: Int { server.gatekeeper.tokenCount }

    /// How many sockets are subscribed to `event` on this server (nil: not known to it).
    func subscribers(_ event: UUID) -> Int? {
        let events = (try? status())?["events"] as? [[String: Any]]
        return events?.first { $0["event_id"] as? String == event.uuidString.lowercased() }?["subscribers"] as? Int
    }

    /// Connects and reads `hello`.
    func connect(_ token: String, file: StaticString = #filePath, line: UInt = #line) throws -> TestSocket {
        let socket = TestSocket(try WebSocketClient(url: ws, headers: ["Authorization": "Bearer \(token)"]))
        let hello = try socket.next(file: file, line: line)
        guard case .hello = hello else {
            XCTFail("expected hello, got \(hello)", file: file, line: line)
            return socket
        }
        return socket
    }

    /// Connects as `token` and subscribes to `event` (when the history does not matter).
    func subscriber(_ token: String, _ event: UUID, file: StaticString = #filePath, line: UInt = #line) throws -> TestSocket {
        let socket = try connect(token, file: file, line: line)
        _ = try socket.subscribe(event, file: file, line: line)
        return socket
    }
}

/// A WebSocket with helpers to send ops and wait for frames.
final class TestSocket {
    let client: WebSocketClient
    init(_ client: WebSocketClient) { self.client = client }

    func send(_ object: [String: Any]) throws {
        try client.send(text: String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self))
    }

    func sendText(_ text: String) throws { try client.send(text: text) }

    /// The next frame; fails the test on timeout.
    func next(timeout: TimeInterval = 5, file: StaticString = #filePath, line: UInt = #line) throws -> ServerFrame {
        guard let frame = try nextOrNil(timeout: timeout) else {
            XCTFail("no frame within \(timeout) s", file: file, line: line)
            throw ClientError.timeout
        }
        return frame
    }

    func nextOrNil(timeout: TimeInterval) throws -> ServerFrame? {
        guard let event = try client.receive(timeout: timeout) else { return nil }
        switch event {
        case .text(let text): return try ServerFrame.decode(Array(text.utf8))
        case .close(let code, let reason): throw ClientError.closed(code: code, reason: reason)
        case .binary: throw ClientError.protocolViolation("binary frame")
        }
    }

    /// Waits for a frame with `op`, skipping others (e.g. live messages).
    func expect(_ op: String, timeout: TimeInterval = 5, file: StaticString = #filePath, line: UInt = #line) throws -> ServerFrame {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            guard let frame = try nextOrNil(timeout: deadline.timeIntervalSinceNow) else { break }
            if frame.op == op { return frame }
        }
        XCTFail("no \(op) frame within \(timeout) s", file: file, line: line)
        throw ClientError.timeout
    }

    /// Reads on, skipping frames, until the server closes the socket: its close code (nil when
    /// `idle` seconds pass with no frame and no close).
    func closeCode(idle: TimeInterval) throws -> UInt16? {
        do {
            while try nextOrNil(timeout: idle) != nil {}
        } catch ClientError.closed(let code, _) {
            return code
        }
        return nil
    }

    /// The seqs of the live messages that arrive before the one whose text is `sentinel`, and
    /// whether it came before `deadline` (other frames are skipped).
    func seqs(until sentinel: String, deadline: Date) throws -> (seqs: [Int64], ended: Bool) {
        var got: [Int64] = []
        while Date() < deadline {
            guard let frame = try nextOrNil(timeout: max(0.1, deadline.timeIntervalSinceNow)) else { break }
            guard case .message(let m) = frame else { continue }
            if m.message == sentinel { return (got, true) }
            got.append(m.seq)
        }
        return (got, false)
    }

    /// Asserts that nothing arrives for `seconds` (apart from frames whose op is in `except`).
    func expectSilence(_ seconds: TimeInterval, except: Set<String> = [], file: StaticString = #filePath, line: UInt = #line) throws {
        let deadline = Date().addingTimeInterval(seconds)
        while let frame = try nextOrNil(timeout: max(0, deadline.timeIntervalSinceNow)) {
            if except.contains(frame.op) { continue }
            XCTFail("expected nothing, got \(frame)", file: file, line: line)
            return
        }
    }

    func subscribe(_ event: UUID, sinceSeq: Int64? = nil, file: StaticString = #filePath, line: UInt = #line) throws
        -> (history: [StaffMessage], unread: Int) {
        var o: [String: Any] = ["op": "subscribe", "event_id": event.uuidString.lowercased(), "ref": "sub"]
        if let sinceSeq { o["since_seq"] = sinceSeq }
        try send(o)
        let frame = try expect("subscribed", file: file, line: line)
        guard case .subscribed(let ref, _, let history, let unread, _) = frame else { throw ClientError.timeout }
        XCTAssertEqual(ref, "sub", file: file, line: line)
        return (history, unread)
    }

    /// Sends `requests` back to back (one group commit) and reads one answer per request: the
    /// refs acknowledged with `sent`, and the code each refused ref got.
    func sendBatch(_ requests: [[String: Any]], file: StaticString = #filePath, line: UInt = #line) throws
        -> (sent: Set<String>, refused: [String: ErrorCode]) {
        for r in requests { try send(r) }
        var sent = Set<String>(), refused: [String: ErrorCode] = [:]
        for _ in requests {
            switch try next(file: file, line: line) {
            case .sent(let ref?, _): sent.insert(ref)
            case .error(let ref?, let e): refused[ref] = e.code
            case let other: XCTFail("unexpected \(other)", file: file, line: line)
            }
        }
        return (sent, refused)
    }

    /// Sends a request and returns the error frame it must produce.
    func expectError(_ object: [String: Any], file: StaticString = #filePath, line: UInt = #line) throws -> StaffcastError {
        try send(object)
        let frame = try expect("error", file: file, line: line)
        guard case .error(_, let e) = frame else { throw ClientError.timeout }
        return e
    }

    func close() { client.close() }
}

extension ServerFrame {
    var message: StaffMessage? {
        switch self {
        case .message(let m), .sent(_, let m): return m
        default: return nil
        }
    }
}
