import Foundation
import StaffcastClient
import StaffcastCore
import StaffcastPostgres
import StaffcastServer
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// The HTTP front cannot be stalled: pipelined requests, bodies chunked or split across writes
/// with pauses, and request heads or bodies that never finish.
final class HTTPFrontTransportTests: TransportTestCase {
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
}
