import Foundation
import StaffcastClient
import StaffcastCore
import XCTest

/// Requests whose headers RFC 9110/9112 forbid get 400 over a real socket and store nothing:
/// control bytes in a header name or value, and every Transfer-Encoding but one `chunked`
/// header (one refusal however it is spelt or split, so no proxy in front can frame a body one
/// way while staffcast frames it another). The server stays up and answers the next request.
final class StrictHTTPTests: IntegrationTestCase {
    override class var startsServer: Bool { true }

    var path: String { "/v1/events/\(fixture.event.uuidString.lowercased())/messages" }

    /// A send's head up to (not including) the extra header lines and the blank line.
    var head: [UInt8] {
        Array("POST \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\nAuthorization: Bearer \(fixture.ownerToken)\r\nContent-Type: text/plain\r\n".utf8)
    }

    func exchange(_ bytes: [UInt8], file: StaticString = #filePath, line: UInt = #line) throws -> RawHTTPResponse {
        let socket = try RawSocket(port: server.port)
        defer { socket.close() }
        try socket.send(bytes)
        return try socket.readResponse(deadline: Date().addingTimeInterval(10))
    }

    func testTheSameSendIsStoredWhenItsHeadersAreClean() throws {
        let body = Array("clean".utf8)
        XCTAssertEqual(try exchange(head + Array("Content-Length: 5\r\nX-Note: a\tb\r\n\r\n".utf8) + body).status, 201)
        let chunked = head + Array("Transfer-Encoding: Chunked\r\n\r\n6\r\nclean2\r\n0\r\n\r\n".utf8)
        XCTAssertEqual(try exchange(chunked).status, 201)
        XCTAssertEqual(fixture.messageCount, 2)
    }

    func testControlBytesInHeadersAre400AndNothingIsStored() throws {
        let body = Array("smuggled?".utf8)
        let cl = Array("Content-Length: \(body.count)\r\n".utf8)
        let cases: [(String, [UInt8])] = [
            ("NUL in a value", Array("X-Note: a".utf8) + [0x00] + Array("b\r\n".utf8)),
            ("0x01 in a value", Array("X-Note: a".utf8) + [0x01] + Array("b\r\n".utf8)),
            ("0x7f in a value", Array("X-Note: a".utf8) + [0x7F] + Array("\r\n".utf8)),
            ("ESC in a value", Array("X-Note: ".utf8) + [0x1B] + Array("[31m\r\n".utf8)),
            ("a lone LF in a value", Array("X-Note: a".utf8) + [0x0A] + Array("b\r\n".utf8)),
            ("a lone CR in a value", Array("X-Note: a".utf8) + [0x0D] + Array("b\r\n".utf8)),
            ("NUL in a name", Array("X-No".utf8) + [0x00] + Array("te: v\r\n".utf8)),
            ("not a token", Array("X(Note): v\r\n".utf8)),
            ("NUL in the token", Array("X-Trace: ".utf8) + [0x00] + Array("\r\n".utf8)),
        ]
        for (what, line) in cases {
            let r = try exchange(head + line + cl + Array("\r\n".utf8) + body)
            XCTAssertEqual(r.status, 400, "\(what): \(r)")
            XCTAssertEqual(r.errorCode, "invalid", "\(what): \(r)")
            XCTAssertEqual(r.header("connection"), "close", what)
        }
        XCTAssertEqual(fixture.messageCount, 0, "a refused request stores nothing")
        XCTAssertEqual(try RawSocket.get(port: server.port, "/healthz", timeout: 5).status, 200)
    }

    func testEveryTransferEncodingButOneChunkedGetsTheSameRefusalAndStoresNothing() throws {
        let chunkedBody = Array("9\r\nsmuggled?\r\n0\r\n\r\n".utf8)
        let variants: [(String, String)] = [
            ("two headers: chunked, identity", "Transfer-Encoding: chunked\r\nTransfer-Encoding: identity\r\n"),
            ("two headers: identity, chunked", "Transfer-Encoding: identity\r\nTransfer-Encoding: chunked\r\n"),
            ("two chunked headers", "Transfer-Encoding: chunked\r\ntransfer-encoding: CHUNKED\r\n"),
            ("split by another header", "Transfer-Encoding: chunked\r\nX-Between: 1\r\nTransfer-Encoding: identity\r\n"),
            ("one header: chunked, identity", "Transfer-Encoding: chunked, identity\r\n"),
            ("one header: identity, chunked", "Transfer-Encoding: identity, chunked\r\n"),
            ("identity", "Transfer-Encoding: identity\r\n"),
            ("gzip", "Transfer-Encoding: gzip\r\n"),
            ("chunked twice in one header", "Transfer-Encoding: chunked,chunked\r\n"),
        ]
        var bodies = Set<String>()
        for (what, lines) in variants {
            let r = try exchange(head + Array(lines.utf8) + Array("\r\n".utf8) + chunkedBody)
            XCTAssertEqual(r.status, 400, "\(what): \(r)")
            XCTAssertEqual(r.errorCode, "invalid", "\(what): \(r)")
            bodies.insert(r.bodyText)
        }
        XCTAssertEqual(bodies.count, 1, "one refusal however it is spelt or split: \(bodies)")
        // With Content-Length as well: refused too.
        let both = try exchange(head + Array("Transfer-Encoding: chunked\r\nContent-Length: 9\r\n\r\n".utf8) + chunkedBody)
        XCTAssertEqual(both.status, 400, "\(both)")
        XCTAssertEqual(fixture.messageCount, 0, "a refused request stores nothing")
        XCTAssertEqual(try RawSocket.get(port: server.port, "/healthz", timeout: 5).status, 200)
    }
}
