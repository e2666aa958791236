import Foundation
import StaffcastClient
import StaffcastCore
import StaffcastPostgres
import StaffcastServer
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// The transport cannot be stalled (written for the transport rewrite: several service loops,
/// header and write-stall deadlines, connection caps). Real sockets, real PostgreSQL; every
/// deadline here is one of correctness ("closed within 15 s"), never of speed.
///
/// These use `ServerConfiguration.serviceThreads`, `headerTimeout`, `writeStallTimeout`,
/// `maxConnections` and `maxConnectionsPerUser`, which the rewrite honours.
final class TransportTests: IntegrationTestCase {
    var eventID: String { fixture.event.uuidString.lowercased() }
    var messagesPath: String { "/v1/events/\(eventID)/messages" }

    /// A token of the right shape (`sc_` and 43 base64url characters) that was never issued.
    static func wellFormedWrongToken() -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        return "sc_" + String((0..<43).map { _ in alphabet.randomElement()! })
    }

    /// A JSON send body written by hand, so that its UTF-8 bytes are exactly the text's
    /// (the texts used here need no escaping).
    static func sendBody(_ text: String) -> [UInt8] { Array(#"{"message":"\#(text)"}"#.utf8) }

    /// `/healthz` from a fresh connection must answer 200 within `seconds`.
    func assertHealthzAnswers(_ server: TestServer, within seconds: TimeInterval = 2, _ context: String,
                              file: StaticString = #filePath, line: UInt = #line) {
        do {
            let r = try RawSocket.get(port: server.port, "/healthz", timeout: seconds)
            XCTAssertEqual(r.status, 200, "\(context): /healthz answered \(r)", file: file, line: line)
        } catch {
            XCTFail("\(context): /healthz on another connection did not answer within \(seconds) s: \(error)",
                    file: file, line: line)
        }
    }

    /// `/v1/status` with the ops token.
    func status(_ server: TestServer) throws -> [String: Any] {
        let data = try server.api("ops-secret").call("GET", "/v1/status")
        return try XCTUnwrap(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    func connectionCount(_ server: TestServer) -> Int? {
        (try? status(server))?["connections"] as? Int
    }

    // MARK: 1. pipelined HTTP

    /// Four requests in one `send()` on one keep-alive connection: two sends with a well-formed
    /// but unknown token (each with a body the server must skip), `/healthz`, a valid send.
    /// All four answers come back in order on that connection, and the server keeps serving
    /// other connections meanwhile.
    func testPipelinedRequestsOnOneConnectionAreAnsweredInOrder() throws {
        let server = try startServer()
        let wrong = Self.wellFormedWrongToken()
        func post(_ token: String, _ text: String) -> [UInt8] {
            RawSocket.request("POST", messagesPath, port: server.port,
                              headers: [("Authorization", "Bearer \(token)"), ("Content-Type", "application/json")],
                              body: Self.sendBody(text))
        }
        let pipeline = post(wrong, "pipelined with a wrong token, 1") + post(wrong, "pipelined with a wrong token, 2")
            + RawSocket.request("GET", "/healthz", port: server.port)
            + post(fixture.ownerToken, "pipelined with a valid token")
        let socket = try RawSocket(port: server.port)
        try socket.sendOnce(pipeline)
        usleep(300_000) // the server is busy with the pipeline: another connection must still be answered
        assertHealthzAnswers(server, "while a pipelined connection is served")

        var responses: [RawHTTPResponse] = []
        let deadline = Date().addingTimeInterval(15)
        do {
            while responses.count < 4 { responses.append(try socket.readResponse(deadline: deadline)) }
        } catch {
            XCTFail("pipelined responses: got \(responses.count) of 4 (\(responses.map(\.status))), then: \(error)")
        }
        assertHealthzAnswers(server, "after the pipelined requests")
        XCTAssertEqual(responses.map(\.status), [401, 401, 200, 201], "\(responses)")
        guard responses.count == 4 else { return }
        for r in responses[0..<2] { XCTAssertEqual(r.errorCode, "unauthorized", "\(r)") }
        for r in responses[0..<3] {
            XCTAssertNotEqual(r.header("connection")?.lowercased(), "close", "a keep-alive connection closed early: \(r)")
        }
        let message = try JSONDecoder().decode(StaffMessage.self, from: Data(responses[3].body))
        XCTAssertEqual(message.message, "pipelined with a valid token")
        XCTAssertEqual(fixture.messageCount, 1, "the refused sends stored nothing")
        // Still the same connection, and still usable.
        try socket.send(RawSocket.request("GET", "/healthz", port: server.port))
        XCTAssertEqual(try socket.readResponse(deadline: Date().addingTimeInterval(5)).status, 200)
    }

    // MARK: 2. request bodies: chunked, and split across writes

    /// `hex size CRLF data CRLF` per piece, then the last chunk.
    static func chunkedEncoding(_ pieces: [[UInt8]]) -> [[UInt8]] {
        pieces.map { Array(String($0.count, radix: 16).utf8) + [13, 10] + $0 + [13, 10] } + [Array("0\r\n\r\n".utf8)]
    }

    /// Splits `body` in three, the first cut between the two bytes of the "é" in it.
    static func splitInsideMultibyte(_ body: [UInt8]) -> [[UInt8]] {
        let cut = (body.firstIndex(of: 0xC3) ?? body.count / 3) + 1
        let second = min(body.count - 1, cut + 5)
        return [Array(body[..<cut]), Array(body[cut..<second]), Array(body[second...])]
    }

    func chunkedHead(_ server: TestServer) -> [UInt8] {
        RawSocket.request("POST", messagesPath, port: server.port,
                          headers: [("Authorization", "Bearer \(fixture.ownerToken)"), ("Content-Type", "application/json"),
                                    ("Transfer-Encoding", "chunked")])
    }

    /// A correct chunked body is read (201, stored with exactly that text) or refused with 411
    /// (nothing stored). A hang, a 400 or anything else fails.
    func assertChunkedSendReadOrRefused(_ socket: RawSocket, _ server: TestServer, text: String,
                                        file: StaticString = #filePath, line: UInt = #line) throws {
        let r: RawHTTPResponse
        do {
            r = try socket.readResponse(deadline: Date().addingTimeInterval(10))
        } catch {
            return XCTFail("no answer to a chunked send within 10 s: \(error)", file: file, line: line)
        }
        switch r.status {
        case 201:
            let message = try JSONDecoder().decode(StaffMessage.self, from: Data(r.body))
            XCTAssertEqual(message.message, text, file: file, line: line)
            XCTAssertEqual(try fixture.count("SELECT count(*) FROM staff_messages WHERE message = $1", [text]), 1,
                           file: file, line: line)
            XCTAssertEqual(fixture.messageCount, 1, file: file, line: line)
        case 411:
            XCTAssertEqual(fixture.messageCount, 0, "a refused send stores nothing", file: file, line: line)
        default:
            XCTFail("a correct chunked body must be read (201) or refused (411); got \(r)", file: file, line: line)
        }
        assertHealthzAnswers(server, "after a chunked send", file: file, line: line)
    }

    func testAChunkedBodyIsReadOrRefusedWith411() throws {
        let server = try startServer()
        let text = "chunked café ✓ \(UUID().uuidString.prefix(8))"
        let socket = try RawSocket(port: server.port)
        try socket.send(chunkedHead(server) + Self.chunkedEncoding(Self.splitInsideMultibyte(Self.sendBody(text))).joined())
        try assertChunkedSendReadOrRefused(socket, server, text: text)
    }

    func testAChunkedBodyArrivingInPiecesWithPausesIsReadOrRefusedWith411() throws {
        let server = try startServer()
        let text = "chunked slowly café ✓ \(UUID().uuidString.prefix(8))"
        let socket = try RawSocket(port: server.port)
        try socket.send(chunkedHead(server))
        for chunk in Self.chunkedEncoding(Self.splitInsideMultibyte(Self.sendBody(text))) {
            usleep(300_000) // the pauses between pieces are what is tested
            // The size line and the data in separate writes too.
            let lineEnd = (chunk.firstRange(of: [13, 10])?.upperBound ?? chunk.count)
            // A server that refused at the head (411) may have closed already: stop writing then.
            guard socket.trySend(Array(chunk[..<lineEnd])) else { break }
            usleep(150_000) // and a pause inside the piece
            if lineEnd < chunk.count, !socket.trySend(Array(chunk[lineEnd...])) { break }
        }
        try assertChunkedSendReadOrRefused(socket, server, text: text)
    }

    /// A Content-Length body (and its head) split across writes with pauses is read whole.
    func testABodySplitAcrossWritesWithPausesIsReadWhole() throws {
        let server = try startServer()
        let text = "in pieces café ✓ \(UUID().uuidString.prefix(8))"
        let request = RawSocket.request("POST", messagesPath, port: server.port,
                                        headers: [("Authorization", "Bearer \(fixture.ownerToken)"),
                                                  ("Content-Type", "application/json")],
                                        body: Self.sendBody(text))
        let headEnd = try XCTUnwrap(request.firstRange(of: [13, 10, 13, 10])).upperBound
        let head = Array(request[..<headEnd])
        let socket = try RawSocket(port: server.port)
        try socket.send(Array(head[..<(head.count / 2)]))
        usleep(300_000) // a head and a body in pieces with pauses between them is what is tested
        try socket.send(Array(head[(head.count / 2)...]))
        for piece in Self.splitInsideMultibyte(Array(request[headEnd...])) {
            usleep(300_000) // a pause before each piece of the body
            try socket.send(piece)
        }
        let r = try socket.readResponse(deadline: Date().addingTimeInterval(10))
        XCTAssertEqual(r.status, 201, "\(r)")
        XCTAssertEqual(try? JSONDecoder().decode(StaffMessage.self, from: Data(r.body)).message, text)
        XCTAssertEqual(try fixture.count("SELECT count(*) FROM staff_messages WHERE message = $1", [text]), 1)
    }

    // MARK: 3. header deadline

    /// Two clients that never finish a request head, one silent after half a request line,
    /// one trickling a header byte at a time, are both closed within `headerTimeout` + 5 s,
    /// while other clients (HTTP and WebSocket) are served all along.
    func testUnfinishedRequestHeadsAreClosedAfterTheHeaderTimeout() throws {
        let headerTimeout = 2.0
        let limit = headerTimeout + 5
        let server = try startServer { $0.headerTimeout = headerTimeout }
        let ws = try server.connect(fixture.staffToken)

        let half = try RawSocket(port: server.port)
        try half.send("GET /heal")
        let halfSentAt = Date()

        let trickle = try RawSocket(port: server.port)
        let slowHead = Array("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ".utf8) + [UInt8](repeating: 0x61, count: 200)
        let trickleStartedAt = Date()
        var trickled = 0

        func closed(_ socket: RawSocket) -> Bool {
            socket.waitForClose(deadline: Date().addingTimeInterval(0.1)).outcome != .open
        }
        var halfClosedAfter: TimeInterval?
        var trickleClosedAfter: TimeInterval?
        let end = Date().addingTimeInterval(limit + 1)
        while Date() < end, halfClosedAfter == nil || trickleClosedAfter == nil {
            if trickleClosedAfter == nil {
                if trickled < slowHead.count, !trickle.trySend([slowHead[trickled]]) || closed(trickle) {
                    trickleClosedAfter = Date().timeIntervalSince(trickleStartedAt)
                }
                trickled += 1
            }
            if halfClosedAfter == nil, closed(half) { halfClosedAfter = Date().timeIntervalSince(halfSentAt) }
            assertHealthzAnswers(server, "while clients hold unfinished request heads")
            usleep(200_000) // the trickle's pace: a byte every 0.2 s keeps the head unfinished
        }
        XCTAssertNotNil(halfClosedAfter, "half a request line, then silence: still open after \(limit) s")
        XCTAssertLessThanOrEqual(halfClosedAfter ?? .infinity, limit)
        XCTAssertNotNil(trickleClosedAfter, "a head trickled a byte at a time (\(trickled) bytes): still open after \(limit) s")
        XCTAssertLessThanOrEqual(trickleClosedAfter ?? .infinity, limit)
        try ws.send(["op": "ping", "ref": "alive"])
        XCTAssertEqual(try ws.expect("pong").ref, "alive")
    }

    /// A request whose body stops arriving is closed too (the header deadline covers a body
    /// once it started), while other clients are served.
    func testAStalledRequestBodyIsClosed() throws {
        let headerTimeout = 2.0
        let limit = 2 * headerTimeout + 5
        let server = try startServer { $0.headerTimeout = headerTimeout }
        let socket = try RawSocket(port: server.port)
        let head = "POST \(messagesPath) HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(fixture.ownerToken)\r\n"
            + "Content-Type: application/json\r\nContent-Length: 200\r\n\r\n{\"message\":\"never fin"
        try socket.send(head)
        let sentAt = Date()
        var closedAfter: TimeInterval?
        let end = Date().addingTimeInterval(limit + 1)
        while Date() < end, closedAfter == nil {
            if socket.waitForClose(deadline: Date().addingTimeInterval(0.3)).outcome != .open {
                closedAfter = Date().timeIntervalSince(sentAt)
            }
            assertHealthzAnswers(server, "while a request body is stalled")
        }
        XCTAssertNotNil(closedAfter, "a body stalled after 20 of 200 bytes: still open after \(limit) s")
        XCTAssertLessThanOrEqual(closedAfter ?? .infinity, limit)
        XCTAssertEqual(fixture.messageCount, 0)
    }

    // MARK: 4. a WebSocket reader that never reads

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

    // MARK: 5. connection caps

    /// The raw answer to a WebSocket upgrade (the socket is closed afterwards).
    func upgradeResponse(_ server: TestServer, token: String?, file: StaticString = #filePath, line: UInt = #line)
        throws -> RawHTTPResponse {
        let socket = try RawSocket(port: server.port)
        defer { socket.close() }
        return try socket.upgrade(token: token)
    }

    /// Connects (reading `hello`), retrying for `seconds` while the server answers 429 or 503.
    func connectEventually(_ server: TestServer, _ token: String, within seconds: TimeInterval = 5,
                           file: StaticString = #filePath, line: UInt = #line) throws -> TestSocket {
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            do {
                return try server.connect(token, file: file, line: line)
            } catch ClientError.handshake(let status, let body) where status == 429 || status == 503 {
                guard Date() < deadline else {
                    XCTFail("still refused with \(status) after \(seconds) s: \(body)", file: file, line: line)
                    throw ClientError.handshake(status: status, body: body)
                }
                usleep(200_000) // refused while the server lets go of a connection: ask again shortly
            }
        }
    }

    func testConnectionCapsPerUserAndPerServer() throws {
        let server = try startServer {
            $0.maxConnectionsPerUser = 3
            $0.maxConnections = 5
        }
        var staff = try (0..<3).map { _ in try server.connect(fixture.staffToken) }

        let fourth = try upgradeResponse(server, token: fixture.staffToken)
        XCTAssertEqual(fourth.status, 429, "a 4th WebSocket of one user: \(fourth)")
        if let code = fourth.errorCode { XCTAssertEqual(code, "rate_limited", "\(fourth)") }

        // Other users still connect, up to the server's cap.
        var admin: TestSocket? = try server.connect(fixture.adminToken)
        let owner = try server.connect(fixture.ownerToken)
        let sixth = try upgradeResponse(server, token: fixture.outsiderToken)
        XCTAssertEqual(sixth.status, 503, "a 6th WebSocket on a server capped at 5: \(sixth)")
        if let code = sixth.errorCode { XCTAssertEqual(code, "unavailable", "\(sixth)") }
        waitUntil(5) { connectionCount(server) == 5 }
        XCTAssertEqual(connectionCount(server), 5, "refused upgrades are not counted")

        // One closes: another user gets in again, and the server is full again.
        staff.removeFirst().close()
        let outsider = try connectEventually(server, fixture.outsiderToken)
        let full = try upgradeResponse(server, token: fixture.staffToken)
        XCTAssertEqual(full.status, 503, "the server is full again: \(full)")

        // Another closes: the same user gets their third connection back.
        admin?.close()
        admin = nil
        staff.append(try connectEventually(server, fixture.staffToken))
        waitUntil(5) { connectionCount(server) == 5 }
        XCTAssertEqual(connectionCount(server), 5)
        for socket in staff + [owner, outsider] {
            try socket.send(["op": "ping", "ref": "cap"])
            XCTAssertEqual(try socket.expect("pong").ref, "cap")
        }
    }

    // MARK: 6. the 401 before the upgrade

    func testABadTokenGetsACompleteHTTP401BeforeTheUpgradeAndThenEOF() throws {
        let server = try startServer()
        let wrong = Self.wellFormedWrongToken()
        let cases: [(name: String, path: String, token: String?)] = [
            ("a wrong bearer token", "/v1/ws", wrong),
            ("no token", "/v1/ws", nil),
            ("a wrong ?access_token", "/v1/ws?access_token=\(wrong)", nil),
        ]
        for c in cases {
            for attempt in 1...3 {
                let context = "\(c.name), attempt \(attempt)"
                let socket = try RawSocket(port: server.port)
                let r: RawHTTPResponse
                do {
                    r = try socket.upgrade(path: c.path, token: c.token)
                } catch {
                    XCTFail("\(context): no complete response: \(error)")
                    continue
                }
                XCTAssertEqual(r.statusLine, "HTTP/1.1 401 Unauthorized", "\(context): \(r)")
                XCTAssertNil(r.header("transfer-encoding"), "\(context): \(r)")
                XCTAssertEqual(r.header("content-length").flatMap { Int($0) }, r.body.count, "\(context): \(r)")
                XCTAssertNil(r.header("sec-websocket-accept"), "\(context): \(r)")
                XCTAssertEqual(r.errorCode, "unauthorized", "\(context): \(r)")
                let message = (r.json?["error"] as? [String: Any])?["message"] as? String
                XCTAssertFalse((message ?? "").isEmpty, "\(context): the error has a sentence: \(r)")
                let (outcome, extra) = socket.waitForClose(deadline: Date().addingTimeInterval(5))
                XCTAssertEqual(outcome, .eof, "\(context): the server closes the connection after the 401")
                XCTAssertEqual(extra, 0, "\(context): nothing after the 401's body")
            }
        }
        // A third-party client sees the 401 too (python's `websockets`, which make test installs).
        XCTAssertEqual(Self.python(["-c", "import websockets.sync.client"])?.status, 0,
                       "python3 cannot import websockets.sync.client: run scripts/install-deps.sh (pip install websockets)")
        do {
            let script = """
                import sys
                from websockets.sync.client import connect
                try:
                    with connect(sys.argv[1], additional_headers={"Authorization": "Bearer " + sys.argv[2]},
                                 subprotocols=["staffcast.v1"], open_timeout=10) as ws:
                        print("CONNECTED")
                except Exception as e:
                    print(type(e).__name__ + ": " + str(e))
                """
            let out = try XCTUnwrap(Self.python(["-c", script, server.ws, wrong]), "python3 did not finish within 30 s")
            XCTAssertFalse(out.output.contains("CONNECTED"), out.output)
            XCTAssertTrue(out.output.contains("401"), "python websockets: \(out.output)")
        }
        _ = try server.connect(fixture.staffToken) // and the server is still up
    }

    /// Runs python3 with `arguments`; nil if it cannot be run or takes over 30 s.
    static func python(_ arguments: [String]) -> (status: Int32, output: String)? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3"] + arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        let output = Guarded(Data())
        let read = DispatchSemaphore(value: 0)
        let handle = pipe.fileHandleForReading
        do { try process.run() } catch { return nil }
        Thread {
            let data = handle.readDataToEndOfFile()
            output.update { $0 = data }
            read.signal()
        }.start()
        waitUntil(30, poll: 0.05) { !process.isRunning }
        if process.isRunning {
            process.terminate()
            return nil
        }
        _ = read.wait(timeout: .now() + 5)
        return (process.terminationStatus, String(decoding: output.value, as: UTF8.self))
    }

    /// A browser's upgrade carries the site's cookies: 6 KB of them (an organisation's domain
    /// with analytics cookies) still connects (the limit was 2,048 bytes, and 431).
    func testAnUpgradeCarryingKilobytesOfCookiesConnects() throws {
        let server = try startServer()
        let socket = try RawSocket(port: server.port)
        let cookies = (0..<40).map { "tracker_\($0)=\(String(repeating: "c", count: 140))" }.joined(separator: "; ")
        XCTAssertGreaterThan(cookies.utf8.count, 6_000)
        let response = try socket.upgrade(token: fixture.staffToken, extraHeaders: [("Cookie", cookies)])
        XCTAssertEqual(response.status, 101, "\(response)")
        let frame = try XCTUnwrap(try socket.readWebSocketFrame(deadline: Date().addingTimeInterval(10)))
        XCTAssertTrue(String(decoding: frame.payload, as: UTF8.self).contains("\"hello\""), String(decoding: frame.payload, as: UTF8.self))
    }

    // MARK: 7. several service loops

    func testSeveralServiceLoopsDeliverEveryMessageOnceInOrder() throws {
        let server = try startServer {
            $0.serviceThreads = 2
            $0.maxConnectionsPerUser = 100
            $0.sendBurst = 100
            $0.sendRatePerSecond = 100
        }
        var subscribers: [TestSocket] = []
        for _ in 0..<60 {
            let s = try server.subscriber(fixture.staffToken, fixture.event)
            subscribers.append(s)
        }
        let owner = try server.connect(fixture.ownerToken)
        var sentSeqs: [Int64] = []
        for i in 0..<30 {
            try owner.send(["op": "send", "event_id": eventID, "message": "loops \(i)", "ref": "s\(i)"])
            sentSeqs.append(try XCTUnwrap(try owner.expect("sent").message).seq)
        }
        // A last message marks the end: what a subscriber got before it is all it got.
        let sentinel = "loops: the end"
        try owner.send(["op": "send", "event_id": eventID, "message": sentinel, "ref": "end"])
        _ = try owner.expect("sent")

        let object = try status(server)
        XCTAssertEqual(object["connections"] as? Int, 61)
        if let loops = object["loops"] as? [[String: Any]] {
            let busy = loops.filter { ($0["connections"] as? Int ?? 0) > 0 }
            XCTAssertGreaterThanOrEqual(busy.count, 2, "connections are spread over the loops: \(loops)")
        } else {
            print("note: /v1/status has no `loops` breakdown; the spread over loops was not checked")
        }

        let deadline = Date().addingTimeInterval(30)
        for (i, s) in subscribers.enumerated() {
            let (got, ended) = try s.seqs(until: sentinel, deadline: deadline)
            XCTAssertTrue(ended, "subscriber \(i) did not get the last message")
            XCTAssertEqual(got, sentSeqs, "subscriber \(i): every message exactly once, in seq order")
        }
    }

    // MARK: 8. stopping during a fan-out burst

    func testStopDuringAFanOutBurstReturnsAndClosesEverySubscriber() throws {
        let subscriberCount = 50
        let server = try startServer {
            $0.maxConnectionsPerUser = 100
            $0.heartbeatInterval = 300
            // Only the stop may end these connections, not the slow-client limits.
            $0.outboundMaxFrames = 1_000_000
            $0.outboundMaxBytes = 1 << 30
            $0.writeStallTimeout = 120
        }
        var subscribers: [TestSocket] = []
        for _ in 0..<subscriberCount {
            let s = try server.subscriber(fixture.staffToken, fixture.event)
            subscribers.append(s)
        }

        enum End: Equatable, CustomStringConvertible {
            case close(UInt16, String), eof, failed(String), stillOpen
            var description: String {
                switch self {
                case .close(let code, let reason): return "close \(code) \(reason)"
                case .eof: return "EOF"
                case .failed(let why): return "failed: \(why)"
                case .stillOpen: return "still open"
                }
            }
        }
        let ends = Guarded<[Int: End]>([:])
        let frames = Guarded(0)
        let readers = DispatchGroup()
        for (i, s) in subscribers.enumerated() {
            let client = Unchecked(s.client)
            readers.enter()
            Thread {
                var end = End.stillOpen
                let until = Date().addingTimeInterval(60)
                reading: while Date() < until {
                    do {
                        switch try client.value.receive(timeout: 1) {
                        case .text?: frames.update { $0 += 1 }
                        case .close(let code, let reason)?:
                            end = .close(code, reason)
                            break reading
                        case .binary?, nil: continue
                        }
                    } catch ClientError.closed(_, let reason) where reason == "connection dropped" {
                        end = .eof
                        break reading
                    } catch {
                        end = .failed("\(error)")
                        break reading
                    }
                }
                ends.update { $0[i] = end }
                readers.leave()
            }.start()
        }

        // The publisher: commits as fast as one database connection can, until told to stop.
        let (conninfo, owner, event) = (fixture.conninfo, fixture.owner, fixture.event)
        let stopPublishing = Guarded(false)
        let published = Guarded(0)
        let publisherDone = DispatchSemaphore(value: 0)
        Thread {
            if let store = try? Store(PGConnection(conninfo: conninfo)) {
                var i = 0
                while !stopPublishing.value {
                    if let request = try? SendRequest(eventID: event, message: "burst \(i)"),
                       (try? store.send(as: owner, request)) != nil {
                        published.update { $0 += 1 }
                    }
                    i += 1
                }
            }
            publisherDone.signal()
        }.start()

        // Stop once the burst is flowing to the subscribers.
        waitUntil(10, poll: 0.02) { frames.value >= subscriberCount * 50 }
        XCTAssertGreaterThan(frames.value, 0, "the burst never reached the subscribers (\(published.value) published)")

        let framesBeforeStop = frames.value
        let stopped = DispatchSemaphore(value: 0)
        let core = server.server
        Thread { core.stop(); stopped.signal() }.start()
        XCTAssertEqual(stopped.wait(timeout: .now() + 10), .success, "stop() did not return within 10 s")
        stopPublishing.update { $0 = true }

        XCTAssertEqual(readers.wait(timeout: .now() + 15), .success, "some subscribers never saw their connection end")
        let byEnd = ends.value
        let closes = byEnd.values.filter { if case .close(1001, _) = $0 { return true } else { return false } }.count
        let eofs = byEnd.values.filter { $0 == .eof }.count
        print("note: stopped after \(framesBeforeStop) frames reached the subscribers (\(published.value) messages "
              + "committed in all); \(closes) ended with 1001, \(eofs) with EOF")
        for i in 0..<subscriberCount {
            let end = byEnd[i] ?? .stillOpen
            switch end {
            case .close(1001, _), .eof: break
            default: XCTFail("subscriber \(i) ended with \(end), not 1001 or EOF")
            }
        }
        XCTAssertThrowsError(try WebSocketClient(url: server.ws, headers: ["Authorization": "Bearer \(fixture.staffToken)"]),
                             "a stopped server accepts no connection")
        _ = publisherDone.wait(timeout: .now() + 10)
    }
}

/// A value shared between threads behind a lock.
private final class Guarded<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value
    init(_ value: Value) { stored = value }
    var value: Value { lock.lock(); defer { lock.unlock() }; return stored }
    func update(_ change: (inout Value) -> Void) { lock.lock(); change(&stored); lock.unlock() }
}

/// Hands a non-Sendable object to exactly one other thread (which then owns it).
private final class Unchecked<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
