import Foundation
import StaffcastCore
import XCTest

/// Limits and malformed heads, and refusals that do not depend on how the bytes arrive.
final class HTTPRequestParserLimitTests: HTTPRequestParserTestCase {
    // MARK: refusals do not depend on how the bytes arrive

    /// Whenever a prefix of `raw` is refused, `raw` itself is refused with the same status.
    func checkRefusalsAreConsistent(_ raw: [UInt8], from: Int = 0, parser: HTTPRequestParser,
                                    file: StaticString = #filePath, line: UInt = #line) -> HTTPParseResult {
        let whole = parser.parse(raw)
        var wholeStatus: Int?
        if case .failure(let e) = whole { wholeStatus = e.status }
        for k in from..<raw.count {
            if case .failure(let e) = parser.parse(Array(raw[0..<k])) {
                XCTAssertEqual(wholeStatus, e.status, "a prefix of \(k) of \(raw.count) bytes is refused, the whole gives \(whole)",
                               file: file, line: line)
                return whole
            }
        }
        return whole
    }

    func isRequest(_ r: HTTPParseResult) -> Bool { if case .request = r { true } else { false } }
    func isFailure(_ r: HTTPParseResult) -> Bool { if case .failure = r { true } else { false } }

    func testHeadLimitIsTheSameWhateverTheSegmentation() {
        let small = HTTPRequestParser(maxHeadBytes: 64, maxBodyBytes: 1_000)
        var outcomes: [HTTPParseResult] = []
        for size in 56...72 {
            let raw = "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\nX:" + String(repeating: "v", count: size - 51) + "\r\n\r\nok"
            XCTAssertEqual(raw.utf8.count, size + 2)
            outcomes.append(checkRefusalsAreConsistent(bytes(raw), parser: small))
        }
        XCTAssertEqual(outcomes.filter(isRequest).count, 9, "heads of 56 to 64 bytes")
        XCTAssertEqual(outcomes.filter(isFailure).count, 8, "heads of 65 to 72 bytes")
    }

    func testChunkSizeLineLimitIsTheSameWhateverTheSegmentation() {
        assertOneLineLimitAfterTheChunkedHead("size lines") { "2;" + String(repeating: "e", count: $0 - 2) + "\r\nok\r\n0\r\n\r\n" }
    }

    func testTrailerLineLimitIsTheSameWhateverTheSegmentation() {
        assertOneLineLimitAfterTheChunkedHead("trailer lines") { "0\r\nX:" + String(repeating: "t", count: $0 - 2) + "\r\n\r\n" }
    }

    /// Lines of 1,018 to 1,032 bytes in the chunked body (`body(length)`): the short enough ones
    /// read, the longer refused, at one limit whatever the segmentation.
    func assertOneLineLimitAfterTheChunkedHead(_ what: String, file: StaticString = #filePath, line: UInt = #line,
                                               _ body: (Int) -> String) {
        let outcomes = (1_018...1_032).map {
            checkRefusalsAreConsistent(bytes(chunkedHead + body($0)), from: chunkedHead.utf8.count, parser: parser)
        }
        XCTAssertTrue(outcomes.contains(where: isRequest), "short enough \(what) are read", file: file, line: line)
        XCTAssertTrue(outcomes.contains(where: isFailure), "long ones are refused", file: file, line: line)
        XCTAssertTrue(outcomes.drop(while: isRequest).allSatisfy(isFailure), "one limit", file: file, line: line)
    }

    func testTrailerSectionLimitIsTheSameWhateverTheSegmentation() {
        let small = HTTPRequestParser(maxHeadBytes: 128, maxBodyBytes: 1_000)
        var outcomes: [HTTPParseResult] = []
        for size in 120...136 {
            let raw = bytes(chunkedHead + "0\r\nX: " + String(repeating: "t", count: size - 7) + "\r\n\r\n")
            outcomes.append(checkRefusalsAreConsistent(raw, from: chunkedHead.utf8.count, parser: small))
        }
        XCTAssertEqual(outcomes.filter(isRequest).count, 9, "sections of 120 to 128 bytes")
        XCTAssertEqual(outcomes.filter(isFailure).count, 8, "sections of 129 to 136 bytes")
    }

    // MARK: limits and malformed heads

    func testHeadOverTheLimit() {
        let limit = 64
        let small = HTTPRequestParser(maxHeadBytes: limit, maxBodyBytes: 1_000)
        func headOf(_ size: Int) -> String {
            let fixed = "GET / HTTP/1.1\r\nHost: a\r\nX: " + "\r\n\r\n"
            return "GET / HTTP/1.1\r\nHost: a\r\nX: " + String(repeating: "v", count: size - fixed.utf8.count) + "\r\n\r\n"
        }
        // A head of exactly the limit is served, and none of its prefixes is refused.
        let exact = bytes(headOf(limit))
        XCTAssertEqual(exact.count, limit)
        let head = HTTPRequestHead(method: "GET", path: "/", query: [:], isHTTP11: true,
                                   headers: [("host", "a"), ("x", String(repeating: "v", count: limit - 32))])
        checkPrefixes(exact, headLength: limit, head: nil,
                      whole: .request(HTTPRequest(head: head, body: []), consumed: limit), parser: small)

        // One byte more is refused, whole or not.
        for size in limit + 1...limit + 5 {
            XCTAssertEqual(status(headOf(size), parser: small), 431, "head of \(size) bytes")
        }
        XCTAssertEqual(status(String(repeating: "a", count: limit + 1), parser: small), 431)
        XCTAssertEqual(status("GET / HTTP/1.1\r\nHost: a\r\nX: " + String(repeating: "v", count: 200), parser: small), 431)
        XCTAssertEqual(small.parse(bytes(String(repeating: "a", count: limit - 1))), .needMore)
    }

    func testHeadLimitDoesNotCountTheBodyOrLeadingEmptyLines() throws {
        let small = HTTPRequestParser(maxHeadBytes: 64, maxBodyBytes: 1_000)
        let body = String(repeating: "b", count: 500)
        let raw = "\r\n\r\nPOST / HTTP/1.1\r\nHost: a\r\nContent-Length: 500\r\n\r\n" + body
        let (r, consumed) = try XCTUnwrap(request(small.parse(bytes(raw))))
        XCTAssertEqual(r.body, bytes(body))
        XCTAssertEqual(consumed, raw.utf8.count)
    }

    func testUnsupportedVersions() {
        for version in ["HTTP/2.0", "HTTP/1.2", "HTTP/0.9", "http/1.1", "HTTP/1.1x", "FOO", "HTTP/"] {
            XCTAssertEqual(status("GET / \(version)\r\nHost: a\r\n\r\n"), 505, version)
        }
    }

    func testMalformedRequestLines() {
        let lines = [
            "get / HTTP/1.1",     // lower-case method
            "Get / HTTP/1.1",
            "GET/ HTTP/1.1",      // missing space
            "GET /HTTP/1.1",
            "GET  / HTTP/1.1",    // double space
            "GET / HTTP/1.1 ",    // trailing space
            " / HTTP/1.1",        // no method
            "GET",
            "",
            "M-SEARCH / HTTP/1.1",
        ]
        for line in lines {
            XCTAssertEqual(status(line + "\r\nHost: a\r\n\r\n"), 400, "'\(line)'")
        }
    }

    func testTargetMustBeAPath() {
        for target in ["example.com", "http://example.com/", "*", "?a=1", "%2F"] {
            XCTAssertEqual(status("GET \(target) HTTP/1.1\r\nHost: a\r\n\r\n"), 400, target)
        }
    }

    func testHostIsRequiredForHTTP11Only() throws {
        XCTAssertEqual(status("GET / HTTP/1.1\r\nAccept: */*\r\n\r\n"), 400)
        XCTAssertEqual(status("GET / HTTP/1.1\r\n\r\n"), 400)
        let raw = "GET /old HTTP/1.0\r\nAccept: */*\r\n\r\n"
        let head = HTTPRequestHead(method: "GET", path: "/old", query: [:], isHTTP11: false, headers: [("accept", "*/*")])
        XCTAssertEqual(parser.parse(bytes(raw)), .request(HTTPRequest(head: head, body: []), consumed: raw.utf8.count))
    }
}
