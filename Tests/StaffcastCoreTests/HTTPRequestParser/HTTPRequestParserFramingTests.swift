import Foundation
import StaffcastCore
import XCTest

/// The request line and framing: prefixes ask for more, pipelined requests are read one by one.
final class HTTPRequestParserFramingTests: HTTPRequestParserTestCase {
    func testSimpleGet() {
        let raw = "GET /v1/messages HTTP/1.1\r\nHost: example.com\r\nAccept: */*\r\n\r\n"
        let expected = HTTPRequestHead(method: "GET", path: "/v1/messages", query: [:], isHTTP11: true,
                                       headers: [("host", "example.com"), ("accept", "*/*")])
        XCTAssertEqual(parser.parse(bytes(raw)), .request(HTTPRequest(head: expected, body: []), consumed: raw.utf8.count))
    }

    func testEmptyBufferNeedsMore() {
        XCTAssertEqual(parser.parse([UInt8]()), .needMore)
    }

    func testEveryPrefixOfARequestNeedsMore() {
        let headText = "POST /v1/send?x=1 HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nX-Trace:  t \r\n\r\n"
        let raw = bytes(headText + "hello")
        let head = HTTPRequestHead(method: "POST", path: "/v1/send", query: ["x": "1"], isHTTP11: true,
                                   headers: [("host", "a"), ("content-length", "5"), ("x-trace", "t")])
        checkPrefixes(raw, headLength: headText.utf8.count, head: head,
                      whole: .request(HTTPRequest(head: head, body: bytes("hello")), consumed: raw.count))
    }

    func testEveryPrefixOfABodilessRequestNeedsMore() {
        let raw = bytes("GET / HTTP/1.0\r\n\r\n")
        let head = HTTPRequestHead(method: "GET", path: "/", query: [:], isHTTP11: false, headers: [])
        checkPrefixes(raw, headLength: raw.count, head: nil,
                      whole: .request(HTTPRequest(head: head, body: []), consumed: raw.count))
    }

    func testEmptyLinesBeforeTheRequestLineAreSkipped() throws {
        let raw = "\r\n\r\nGET /x HTTP/1.1\r\nHost: a\r\n\r\n"
        let (r, consumed) = try XCTUnwrap(request(parser.parse(bytes(raw))))
        XCTAssertEqual(r.head.method, "GET")
        XCTAssertEqual(r.head.path, "/x")
        XCTAssertEqual(consumed, raw.utf8.count, "the empty lines are consumed with the request")
        XCTAssertEqual(parser.parse(bytes("\r\n")), .needMore)
        XCTAssertEqual(parser.parse(bytes("\r\n\r\n")), .needMore)
        XCTAssertEqual(parser.parse(bytes("\r\n\r\nGET / HT")), .needMore)
    }

    func testPipelinedRequests() throws {
        let first = "GET /one HTTP/1.1\r\nHost: a\r\n\r\n"
        let second = "POST /two HTTP/1.1\r\nHost: a\r\nContent-Length: 11\r\n\r\nhello world"
        let third = chunkedHead + "3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n"
        var buffer = bytes(first + second + third)

        let (r1, c1) = try XCTUnwrap(request(parser.parse(buffer)))
        XCTAssertEqual(r1.head.path, "/one")
        XCTAssertEqual(r1.body, [])
        XCTAssertEqual(c1, first.utf8.count)
        buffer.removeFirst(c1)

        let (r2, c2) = try XCTUnwrap(request(parser.parse(buffer)))
        XCTAssertEqual(r2.head.method, "POST")
        XCTAssertEqual(r2.head.path, "/two")
        XCTAssertEqual(r2.body, bytes("hello world"))
        XCTAssertEqual(c2, second.utf8.count)
        buffer.removeFirst(c2)

        let (r3, c3) = try XCTUnwrap(request(parser.parse(buffer)))
        XCTAssertEqual(r3.head, chunkedHeadValue)
        XCTAssertEqual(r3.body, bytes("abcde"))
        XCTAssertEqual(c3, third.utf8.count)
        buffer.removeFirst(c3)

        XCTAssertEqual(buffer, [])
        XCTAssertEqual(parser.parse(buffer), .needMore)
    }

    func testPipelinedRequestWithPartialSecond() throws {
        let first = "POST /a HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nxyz"
        let buffer = bytes(first + "GET /b HTTP/1.1\r\nHo")
        let (r, consumed) = try XCTUnwrap(request(parser.parse(buffer)))
        XCTAssertEqual(r.body, bytes("xyz"))
        XCTAssertEqual(consumed, first.utf8.count)
        XCTAssertEqual(parser.parse(Array(buffer[consumed...])), .needMore)
    }
}
