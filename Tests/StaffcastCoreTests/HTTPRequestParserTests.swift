import Foundation
import StaffcastCore
import XCTest

final class HTTPRequestParserTests: XCTestCase {
    let parser = HTTPRequestParser()

    // MARK: helpers

    func bytes(_ s: String) -> [UInt8] { Array(s.utf8) }

    /// The status of a failure, or nil (with the result in the message) for anything else.
    func status(_ result: HTTPParseResult, file: StaticString = #filePath, line: UInt = #line) -> Int? {
        if case .failure(let e) = result { return e.status }
        XCTFail("expected a failure, got \(result)", file: file, line: line)
        return nil
    }

    func status(_ raw: String, parser: HTTPRequestParser? = nil, file: StaticString = #filePath, line: UInt = #line) -> Int? {
        status((parser ?? self.parser).parse(bytes(raw)), file: file, line: line)
    }

    /// The head of a whole request (or of one whose body is incomplete).
    func head(_ raw: String, file: StaticString = #filePath, line: UInt = #line) -> HTTPRequestHead? {
        switch parser.parse(bytes(raw)) {
        case .request(let r, _): return r.head
        case .incompleteBody(let h): return h
        case .upgrade(let h, _): return h
        case let other:
            XCTFail("expected a head, got \(other)", file: file, line: line)
            return nil
        }
    }

    func request(_ result: HTTPParseResult, file: StaticString = #filePath, line: UInt = #line) -> (HTTPRequest, consumed: Int)? {
        if case .request(let r, let consumed) = result { return (r, consumed) }
        XCTFail("expected a request, got \(result)", file: file, line: line)
        return nil
    }

    /// Checks every proper prefix of `raw` gives `.needMore` before the head is complete
    /// (`headLength` bytes) and `.incompleteBody(head)` after, and `raw` itself gives `whole`.
    func checkPrefixes(_ raw: [UInt8], headLength: Int, head: HTTPRequestHead?, whole: HTTPParseResult,
                       parser: HTTPRequestParser? = nil, file: StaticString = #filePath, line: UInt = #line) {
        let parser = parser ?? self.parser
        for k in 0..<raw.count {
            let result = parser.parse(Array(raw[0..<k]))
            if k < headLength {
                XCTAssertEqual(result, .needMore, "prefix of \(k) bytes", file: file, line: line)
            } else if let head {
                XCTAssertEqual(result, .incompleteBody(head), "prefix of \(k) bytes", file: file, line: line)
            } else {
                XCTFail("prefix of \(k) bytes gave \(result) but no head was expected", file: file, line: line)
            }
        }
        XCTAssertEqual(parser.parse(raw), whole, file: file, line: line)
    }

    let chunkedHead = "POST /c HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
    var chunkedHeadValue: HTTPRequestHead {
        HTTPRequestHead(method: "POST", path: "/c", query: [:], isHTTP11: true,
                        headers: [("host", "a"), ("transfer-encoding", "chunked")])
    }

    // MARK: request line and framing

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

    // MARK: Content-Length

    func testContentLengthBody() throws {
        let headText = "PUT /p HTTP/1.1\r\nHost: a\r\nContent-Length: 4\r\n\r\n"
        let head = HTTPRequestHead(method: "PUT", path: "/p", query: [:], isHTTP11: true,
                                   headers: [("host", "a"), ("content-length", "4")])
        XCTAssertEqual(parser.parse(bytes(headText)), .incompleteBody(head))
        XCTAssertEqual(parser.parse(bytes(headText + "abc")), .incompleteBody(head))
        XCTAssertEqual(parser.parse(bytes(headText + "abcd")),
                       .request(HTTPRequest(head: head, body: bytes("abcd")), consumed: headText.utf8.count + 4))
        // Bytes beyond the body belong to the next request.
        XCTAssertEqual(parser.parse(bytes(headText + "abcdGET")),
                       .request(HTTPRequest(head: head, body: bytes("abcd")), consumed: headText.utf8.count + 4))
    }

    func testZeroContentLength() {
        let raw = "POST /p HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n"
        let head = HTTPRequestHead(method: "POST", path: "/p", query: [:], isHTTP11: true,
                                   headers: [("host", "a"), ("content-length", "0")])
        XCTAssertEqual(parser.parse(bytes(raw)), .request(HTTPRequest(head: head, body: []), consumed: raw.utf8.count))
    }

    func testBinaryBodyIsKeptExactly() throws {
        let headText = "POST /bin HTTP/1.1\r\nHost: a\r\nContent-Length: 6\r\n\r\n"
        let body: [UInt8] = [0x00, 0x0D, 0x0A, 0x0D, 0x0A, 0xFF]
        let (r, consumed) = try XCTUnwrap(request(parser.parse(bytes(headText) + body)))
        XCTAssertEqual(r.body, body)
        XCTAssertEqual(consumed, headText.utf8.count + 6)
    }

    func testExpectHeaderIsVisibleOnTheIncompleteHead() {
        let raw = "POST /upload HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\nExpect: 100-continue\r\n\r\n"
        let head = HTTPRequestHead(method: "POST", path: "/upload", query: [:], isHTTP11: true,
                                   headers: [("host", "a"), ("content-length", "10"), ("expect", "100-continue")])
        XCTAssertEqual(parser.parse(bytes(raw)), .incompleteBody(head))
        XCTAssertEqual(head.header("expect"), "100-continue")
    }

    func testIdenticalDuplicateContentLengthsAreAccepted() throws {
        try assertOneRequest("POST /p HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nok", body: "ok")
    }

    /// `raw` is read as one request, whole, whose body is `body`.
    func assertOneRequest(_ raw: String, body: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let (r, consumed) = try XCTUnwrap(request(parser.parse(bytes(raw))), file: file, line: line)
        XCTAssertEqual(r.body, bytes(body), file: file, line: line)
        XCTAssertEqual(consumed, raw.utf8.count, file: file, line: line)
    }

    func testConflictingContentLengthsAreRefused() {
        XCTAssertEqual(status("POST /p HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nok!"), 400)
    }

    func testBadContentLengthsAreRefused() {
        for value in ["abc", "-1", "+5", "5x", "0x10", "1 2", "", "5, 5", "99999999999999999999999"] {
            XCTAssertEqual(status("POST /p HTTP/1.1\r\nHost: a\r\nContent-Length: \(value)\r\n\r\nhello"), 400, "Content-Length: \(value)")
        }
    }

    func testContentLengthOverTheLimit() {
        let small = HTTPRequestParser(maxHeadBytes: 8_192, maxBodyBytes: 10)
        XCTAssertEqual(status("POST /p HTTP/1.1\r\nHost: a\r\nContent-Length: 11\r\n\r\n", parser: small), 413,
                       "refused from the head, before the body arrives")
        let raw = "POST /p HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\n0123456789"
        XCTAssertEqual(request(small.parse(bytes(raw)))?.0.body, bytes("0123456789"), "exactly the limit is fine")

        XCTAssertEqual(status("POST /p HTTP/1.1\r\nHost: a\r\nContent-Length: \(Limits.maxFrameBytes + 1)\r\n\r\n"), 413,
                       "the default limit is a frame")
        XCTAssertEqual(parser.parse(bytes("POST /p HTTP/1.1\r\nHost: a\r\nContent-Length: \(Limits.maxFrameBytes)\r\n\r\n")),
                       .incompleteBody(HTTPRequestHead(method: "POST", path: "/p", query: [:], isHTTP11: true,
                                                       headers: [("host", "a"), ("content-length", "\(Limits.maxFrameBytes)")])))
    }

    // MARK: chunked bodies

    /// `chunks` after the chunked head are read, whole, as one request whose body is `body`.
    func assertChunked(_ chunks: String, body: String, file: StaticString = #filePath, line: UInt = #line) {
        let raw = chunkedHead + chunks
        XCTAssertEqual(parser.parse(bytes(raw)), .request(HTTPRequest(head: chunkedHeadValue, body: bytes(body)), consumed: raw.utf8.count),
                       file: file, line: line)
    }

    func testOneChunk() {
        assertChunked("5\r\nhello\r\n0\r\n\r\n", body: "hello")
    }

    func testEmptyChunkedBody() {
        assertChunked("0\r\n\r\n", body: "")
    }

    func testSeveralChunks() {
        assertChunked("5\r\nhello\r\n1\r\n \r\nA\r\n0123456789\r\nb\r\nabcdefghijk\r\n0\r\n\r\n", body: "hello 0123456789abcdefghijk")
    }

    func testChunkExtensionsAreIgnored() {
        assertChunked("5;x=y\r\nhello\r\n3;name=\"quoted\";flag\r\nabc\r\n0;last=1\r\n\r\n", body: "helloabc")
    }

    func testTrailersAreSkipped() {
        let message = chunkedHead + "5\r\nhello\r\n0\r\nX-Checksum: abc\r\nX-Other: 1\r\n\r\n"
        let raw = message + "GET /next HTTP/1.1\r\nHost: a\r\n\r\n"
        XCTAssertEqual(parser.parse(bytes(raw)),
                       .request(HTTPRequest(head: chunkedHeadValue, body: bytes("hello")), consumed: message.utf8.count))
        // A trailer section that has not ended yet.
        XCTAssertEqual(parser.parse(bytes(chunkedHead + "5\r\nhello\r\n0\r\nX-Checksum: abc\r\n")), .incompleteBody(chunkedHeadValue))
    }

    func testChunkedBodySplitAtEveryByte() {
        let raw = bytes(chunkedHead + "5;x=y\r\nhello\r\n1\r\n,\r\n6\r\n world\r\n0\r\nX-T: 1\r\n\r\n")
        checkPrefixes(raw, headLength: chunkedHead.utf8.count, head: chunkedHeadValue,
                      whole: .request(HTTPRequest(head: chunkedHeadValue, body: bytes("hello, world")), consumed: raw.count))
    }

    func testMalformedChunkSizesAreRefused() {
        for size in ["zz", "", " ", "0x5", "g", "-2", "-1", "+5", "5 5", ";x=y", ";5", ";a", "123456789"] {
            let raw = chunkedHead + size + "\r\nhello\r\n0\r\n\r\n"
            XCTAssertEqual(status(raw), 400, "chunk size '\(size)'")
        }
    }

    func testNegativeChunkSizeIsRefusedWhateverFollows() {
        // "-2" once made the parser slice bytes[i..<i-2] and trap.
        XCTAssertEqual(status(chunkedHead + "-2\r\n"), 400)
        XCTAssertEqual(status(chunkedHead + "-2\r\nab\r\n0\r\n\r\n"), 400)
        XCTAssertEqual(status(chunkedHead + "-0\r\n\r\n"), 400)
    }

    func testChunkLongerThanItsSizeIsRefused() {
        XCTAssertEqual(status(chunkedHead + "3\r\nhello\r\n0\r\n\r\n"), 400)
        XCTAssertEqual(status(chunkedHead + "3\r\nabcX\r\n"), 400, "refused as soon as the byte after the chunk is not CR")
    }

    func testOverlongChunkSizeLineIsRefused() {
        let longExtension = ";" + String(repeating: "x", count: 2_000)
        XCTAssertEqual(status(chunkedHead + "5" + longExtension), 400, "even before its CRLF arrives")
    }

    func testOverlongTrailerLineIsRefused() {
        // It used to give .incompleteBody forever, however many bytes followed.
        let trailer = "X-Long: " + String(repeating: "t", count: 2_000)
        XCTAssertEqual(status(chunkedHead + "0\r\n" + trailer + "\r\n\r\n"), 431, "not left waiting for more forever")
        XCTAssertEqual(status(chunkedHead + "0\r\n" + trailer), 431)
    }

    func testTrailerSectionOfExactlyTheHeadLimit() {
        let small = HTTPRequestParser(maxHeadBytes: 128, maxBodyBytes: 1_000)
        func trailers(_ size: Int) -> String { "X: " + String(repeating: "t", count: size - 7) + "\r\n\r\n" }
        XCTAssertEqual(trailers(128).utf8.count, 128)
        let exact = chunkedHead + "0\r\n" + trailers(128)
        XCTAssertEqual(small.parse(bytes(exact)),
                       .request(HTTPRequest(head: chunkedHeadValue, body: []), consumed: exact.utf8.count))
        XCTAssertEqual(status(chunkedHead + "0\r\n" + trailers(129), parser: small), 431)
    }

    func testTrailerSectionIsBoundedByTheHeadLimit() {
        let small = HTTPRequestParser(maxHeadBytes: 256, maxBodyBytes: 1_000)
        let trailers = String(repeating: "X-T: 0123456789\r\n", count: 20) // 340 bytes, each line short
        XCTAssertEqual(status(chunkedHead + "0\r\n" + trailers, parser: small), 431)
        XCTAssertEqual(status(chunkedHead + "0\r\n" + trailers + "\r\n", parser: small), 431)
        let few = String(repeating: "X-T: 0123456789\r\n", count: 5)
        XCTAssertEqual(small.parse(bytes(chunkedHead + "0\r\n" + few + "\r\n")),
                       .request(HTTPRequest(head: chunkedHeadValue, body: []), consumed: (chunkedHead + "0\r\n" + few + "\r\n").utf8.count))
    }

    func testChunkedBodyOverTheLimit() {
        let small = HTTPRequestParser(maxHeadBytes: 8_192, maxBodyBytes: 10)
        XCTAssertEqual(status(chunkedHead + "6\r\nhello!\r\n5\r\n", parser: small), 413, "refused from the size line")
        XCTAssertEqual(status(chunkedHead + "b\r\n", parser: small), 413)
        let raw = chunkedHead + "6\r\nhello!\r\n4\r\nabcd\r\n0\r\n\r\n"
        XCTAssertEqual(small.parse(bytes(raw)),
                       .request(HTTPRequest(head: chunkedHeadValue, body: bytes("hello!abcd")), consumed: raw.utf8.count),
                       "exactly the limit is fine")
    }

    /// Every Transfer-Encoding but one header saying `chunked` gets the one refusal, however
    /// it is spelt or split: a proxy in front must never frame the body one way and we another.
    func testTransferEncodingOtherThanOneChunkedIsRefusedAlikeHoweverSpeltOrSplit() {
        let variants = [
            ["gzip"], ["identity"], ["x-custom"], [""], ["chunked, gzip"], ["chunked, identity"], ["identity, chunked"],
            ["chunked,chunked"], ["chunked, chunked"], ["chunked;q=1"], ["x-chunked"], ["chunkedx"], ["chunked ,"],
            ["chunked", "identity"], ["identity", "chunked"], ["chunked", "chunked"], ["Chunked", "CHUNKED"], ["chunked", ""],
        ]
        for headers in variants {
            let lines = headers.map { "Transfer-Encoding: \($0)\r\n" }.joined()
            let body = "5\r\nhello\r\n0\r\n\r\n"
            let raw = "POST /p HTTP/1.1\r\nHost: a\r\n" + lines + "\r\n" + body
            XCTAssertEqual(parser.parse(bytes(raw)), .failure(HTTPRequestParser.transferEncodingRefusal), "\(headers)")
            // Split by other headers, or spelt in other cases: the same.
            let split = "POST /p HTTP/1.1\r\n" + headers.map { "tRaNsFeR-eNcOdInG: \($0)\r\nHost: a\r\n" }.joined() + "\r\n" + body
            if headers.count > 1 || headers[0].lowercased() != "chunked" {
                XCTAssertEqual(parser.parse(bytes(split)), .failure(HTTPRequestParser.transferEncodingRefusal), "split \(headers)")
            }
            // On an upgrade request too: framing is judged first.
            let upgrade = "GET /v1/ws HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" + lines + "\r\n"
            XCTAssertEqual(parser.parse(bytes(upgrade)), .failure(HTTPRequestParser.transferEncodingRefusal), "upgrade \(headers)")
        }
        XCTAssertEqual(HTTPRequestParser.transferEncodingRefusal.status, 400)
    }

    func testOneChunkedTransferEncodingWithSpacesAroundIsRead() throws {
        for value in ["chunked", " chunked ", "\tchunked", "CHUNKED", "Chunked\t"] {
            let raw = "POST /p HTTP/1.1\r\nHost: a\r\nTransfer-Encoding:\(value)\r\n\r\n2\r\nok\r\n0\r\n\r\n"
            XCTAssertEqual(try XCTUnwrap(request(parser.parse(bytes(raw)))).0.body, bytes("ok"), "'\(value)'")
        }
    }

    func testTransferEncodingInHTTP10IsRefused() {
        XCTAssertEqual(status("POST /p HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n"), 400)
    }

    func testTransferEncodingIsCaseInsensitive() throws {
        try assertOneRequest("POST /p HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: Chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n", body: "ok")
    }

    func testContentLengthWithTransferEncodingIsRefused() {
        XCTAssertEqual(status("POST /p HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"), 400)
        XCTAssertEqual(status("POST /p HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n"), 400)
    }

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

    // MARK: headers

    func testHeaderNamesAreLowerCasedAndValuesTrimmed() throws {
        let raw = "GET / HTTP/1.1\r\nHOST:a.example:8080\r\nX-Mixed-Case:   value with  spaces \t \r\nX-Empty:\r\nX-Tab:\tt\r\nx-mixed-case: second\r\n\r\n"
        let h = try XCTUnwrap(head(raw))
        XCTAssertEqual(h.headers.map(\.name), ["host", "x-mixed-case", "x-empty", "x-tab", "x-mixed-case"])
        XCTAssertEqual(h.headers.map(\.value), ["a.example:8080", "value with  spaces", "", "t", "second"])
        XCTAssertEqual(h.header("x-mixed-case"), "value with  spaces", "the first value")
        XCTAssertNil(h.header("X-Mixed-Case"), "lookups are by lower-case name")
        XCTAssertNil(h.header("absent"))
    }

    func testUTF8HeaderValue() throws {
        let h = try XCTUnwrap(head("GET / HTTP/1.1\r\nHost: a\r\nX-Name: Zoë Müller\r\n\r\n"))
        XCTAssertEqual(h.header("x-name"), "Zoë Müller")
    }

    /// RFC 9110 §5.5: a value is visible characters, obs-text, spaces and tabs; NUL, other
    /// control bytes, a lone CR or LF and DEL are refused, not stored.
    func testControlBytesInHeaderValuesAreRefused() {
        let controls = Array(UInt8(0x00)...UInt8(0x08)) + Array(UInt8(0x0A)...UInt8(0x1F)) + [0x7F]
        for c in controls {
            for value: [UInt8] in [[0x61, c, 0x62], [c, 0x62], [0x61, c], [c]] {
                let raw = bytes("POST /p HTTP/1.1\r\nHost: a\r\nX-Note: ") + value + bytes("\r\nContent-Length: 2\r\n\r\nok")
                guard case .failure(let e) = parser.parse(raw) else {
                    XCTFail("byte 0x\(String(c, radix: 16)) in \(value) was accepted")
                    continue
                }
                XCTAssertEqual(e.status, 400, "byte 0x\(String(c, radix: 16))")
            }
            // In the Host header and in the token's header alike.
            XCTAssertEqual(status(parser.parse(bytes("GET / HTTP/1.1\r\nHost: a") + [c] + bytes("\r\n\r\n"))), 400)
            XCTAssertEqual(status(parser.parse(bytes("GET / HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer x") + [c]
                + bytes("y\r\n\r\n"))), 400)
        }
    }

    func testTabsAndNonASCIIInsideValuesAreKept() throws {
        let h = try XCTUnwrap(head("GET / HTTP/1.1\r\nHost: a\r\nX-Tab: a\tb\r\nX-Name: Zoë\r\n\r\n"))
        XCTAssertEqual(h.header("x-tab"), "a\tb")
        XCTAssertEqual(h.header("x-name"), "Zoë")
        let raw = bytes("GET / HTTP/1.1\r\nHost: a\r\nX-Obs: ") + [0x80, 0xFF] + bytes("\r\n\r\n")
        XCTAssertNotNil(request(parser.parse(raw)), "obs-text (0x80-0xFF) is allowed in a value")
    }

    /// RFC 9110 §5.1: a header name is a token.
    func testHeaderNamesMustBeTokens() throws {
        let bad: [[UInt8]] = [[0x00], [0x58, 0x00], [0x58, 0x01, 0x59], [0x7F], [0x58, 0x7F], [0xC3, 0xA9],
                              Array("X(1)".utf8), Array("X/Y".utf8), Array("X\"Y".utf8), Array("X,Y".utf8), Array("X@Y".utf8),
                              Array("X[Y]".utf8), Array("X{Y}".utf8), Array("X=Y".utf8), Array("X;Y".utf8), Array("X\\Y".utf8),
                              Array("X?Y".utf8), Array("X<Y>".utf8), [0x58, 0x0B]]
        for name in bad {
            let raw = bytes("GET / HTTP/1.1\r\nHost: a\r\n") + name + bytes(": v\r\n\r\n")
            XCTAssertEqual(status(parser.parse(raw)), 400, "name \(name)")
        }
        let good = "!#$%&'*+-.^_`|~09AZaz"
        let h = try XCTUnwrap(head("GET / HTTP/1.1\r\nHost: a\r\n\(good): v\r\n\r\n"))
        XCTAssertEqual(h.header(good.lowercased()), "v")
    }

    func testControlBytesInTheRequestLineAreRefused() {
        for c in Array(UInt8(0x00)...UInt8(0x1F)) + [0x7F] {
            XCTAssertEqual(status(parser.parse(bytes("GET /a") + [c] + bytes("b HTTP/1.1\r\nHost: a\r\n\r\n"))), 400,
                           "byte 0x\(String(c, radix: 16)) in the target")
            XCTAssertEqual(status(parser.parse(bytes("GET /?q=") + [c] + bytes(" HTTP/1.1\r\nHost: a\r\n\r\n"))), 400,
                           "byte 0x\(String(c, radix: 16)) in the query")
        }
    }

    func testMalformedHeaderLines() {
        for line in ["Bad Name: x", "Name : x", "Name\t: x", " Folded: x", "NoColon", ": no name"] {
            XCTAssertEqual(status("GET / HTTP/1.1\r\nHost: a\r\n\(line)\r\n\r\n"), 400, "'\(line)'")
        }
    }

    // MARK: query

    func testQueryParametersAreDecoded() throws {
        let target = "/v1/search?a=1&b=hello+world&c=%41%62%2b&d&e=&f=caf%C3%A9&%6B%65%79=v&g=%zz&h=100%25&i=%4&j=a=b&&x=1&x=2"
        let h = try XCTUnwrap(head("GET \(target) HTTP/1.1\r\nHost: a\r\n\r\n"))
        XCTAssertEqual(h.path, "/v1/search")
        XCTAssertEqual(h.query, [
            "a": "1",
            "b": "hello world",
            "c": "Ab+",
            "d": "",
            "e": "",
            "f": "café",
            "key": "v",
            "g": "%zz",
            "h": "100%",
            "i": "%4",
            "j": "a=b",
            "x": "2",
        ])
    }

    func testPathIsNotDecoded() throws {
        let h = try XCTUnwrap(head("GET /a%20b/c+d?q=%20 HTTP/1.1\r\nHost: a\r\n\r\n"))
        XCTAssertEqual(h.path, "/a%20b/c+d")
        XCTAssertEqual(h.query, ["q": " "])
    }

    func testEmptyQuery() throws {
        let h = try XCTUnwrap(head("GET /p? HTTP/1.1\r\nHost: a\r\n\r\n"))
        XCTAssertEqual(h.path, "/p")
        XCTAssertEqual(h.query, [:])
    }

    // MARK: keep-alive

    func testKeepAlive() throws {
        XCTAssertEqual(try XCTUnwrap(head("GET / HTTP/1.1\r\nHost: a\r\n\r\n")).keepAlive, true)
        XCTAssertEqual(try XCTUnwrap(head("GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")).keepAlive, false)
        XCTAssertEqual(try XCTUnwrap(head("GET / HTTP/1.1\r\nHost: a\r\nConnection: Close\r\n\r\n")).keepAlive, false)
        XCTAssertEqual(try XCTUnwrap(head("GET / HTTP/1.1\r\nHost: a\r\nConnection: keep-alive\r\n\r\n")).keepAlive, true)
        XCTAssertEqual(try XCTUnwrap(head("GET / HTTP/1.0\r\n\r\n")).keepAlive, false)
        XCTAssertEqual(try XCTUnwrap(head("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")).keepAlive, true)
        XCTAssertEqual(try XCTUnwrap(head("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n")).keepAlive, true)
        XCTAssertEqual(try XCTUnwrap(head("GET / HTTP/1.0\r\nConnection: close\r\n\r\n")).keepAlive, false)
    }

    // MARK: WebSocket upgrade

    func testWebSocketUpgrade() {
        let headText = "GET /v1/ws?access_token=t HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        let head = HTTPRequestHead(method: "GET", path: "/v1/ws", query: ["access_token": "t"], isHTTP11: true, headers: [
            ("host", "a"), ("upgrade", "websocket"), ("connection", "Upgrade"),
            ("sec-websocket-key", "dGhlIHNhbXBsZSBub25jZQ=="), ("sec-websocket-version", "13"),
        ])
        XCTAssertTrue(head.isWebSocketUpgrade)
        XCTAssertEqual(parser.parse(bytes(headText)), .upgrade(head, headLength: headText.utf8.count))
        // Bytes after the head (an early WebSocket frame) are not part of it.
        XCTAssertEqual(parser.parse(bytes(headText) + [0x81, 0x85, 1, 2, 3, 4]), .upgrade(head, headLength: headText.utf8.count))
        // Every prefix of the head needs more.
        for k in 0..<headText.utf8.count {
            XCTAssertEqual(parser.parse(Array(bytes(headText)[0..<k])), .needMore, "prefix of \(k) bytes")
        }
    }

    func testWebSocketUpgradeDetection() throws {
        func isUpgrade(_ headers: String) throws -> Bool {
            try XCTUnwrap(head("GET /ws HTTP/1.1\r\nHost: a\r\n\(headers)\r\n")).isWebSocketUpgrade
        }
        XCTAssertTrue(try isUpgrade("Upgrade: websocket\r\nConnection: Upgrade\r\n"))
        XCTAssertTrue(try isUpgrade("Upgrade: WebSocket\r\nConnection: upgrade\r\n"))
        XCTAssertTrue(try isUpgrade("UPGRADE: WEBSOCKET\r\nCONNECTION: UPGRADE\r\n"))
        XCTAssertTrue(try isUpgrade("Connection: keep-alive, Upgrade\r\nUpgrade: websocket\r\n"))
        XCTAssertFalse(try isUpgrade("Upgrade: websocket\r\n"))
        XCTAssertFalse(try isUpgrade("Connection: Upgrade\r\n"))
        XCTAssertFalse(try isUpgrade("Upgrade: h2c\r\nConnection: Upgrade\r\n"))
        XCTAssertFalse(try isUpgrade("Upgrade: websocket\r\nConnection: keep-alive\r\n"))
        XCTAssertFalse(try isUpgrade(""))
    }

    func testUpgradeHeadLengthIncludesLeadingEmptyLines() {
        let headText = "\r\nGET /ws HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n"
        let head = HTTPRequestHead(method: "GET", path: "/ws", query: [:], isHTTP11: true,
                                   headers: [("host", "a"), ("upgrade", "websocket"), ("connection", "Upgrade")])
        XCTAssertEqual(parser.parse(bytes(headText)), .upgrade(head, headLength: headText.utf8.count))
    }

    func testNonUpgradeGetIsARequest() throws {
        let raw = "GET /ws HTTP/1.1\r\nHost: a\r\nUpgrade: h2c\r\nConnection: Upgrade\r\n\r\n"
        let (r, consumed) = try XCTUnwrap(request(parser.parse(bytes(raw))))
        XCTAssertFalse(r.head.isWebSocketUpgrade)
        XCTAssertEqual(consumed, raw.utf8.count)
    }

    // MARK: bearer token

    func testBearerToken() throws {
        func token(_ extra: String, target: String = "/") throws -> String? {
            try XCTUnwrap(head("GET \(target) HTTP/1.1\r\nHost: a\r\n\(extra)\r\n")).bearerToken
        }
        XCTAssertEqual(try token("Authorization: Bearer abc.DEF-123\r\n"), "abc.DEF-123")
        XCTAssertEqual(try token("Authorization: bearer abc\r\n"), "abc")
        XCTAssertEqual(try token("Authorization: BEARER abc\r\n"), "abc")
        XCTAssertEqual(try token("Authorization: Bearer   abc  \r\n"), "abc")
        XCTAssertEqual(try token("Authorization: Basic dXNlcjpwYXNz\r\n"), "")
        XCTAssertEqual(try token("Authorization: Bearer \r\n"), "")
        XCTAssertEqual(try token("Authorization: Bearer\r\n"), "")
        XCTAssertEqual(try token("Authorization: \r\n"), "")
        // The header wins over the query, even when it is not a bearer.
        XCTAssertEqual(try token("Authorization: Bearer fromHeader\r\n", target: "/?access_token=fromQuery"), "fromHeader")
        XCTAssertEqual(try token("Authorization: Basic x\r\n", target: "/?access_token=fromQuery"), "")
        // No header: the query parameter, decoded.
        XCTAssertEqual(try token("", target: "/ws?access_token=a%2Bb+c"), "a+b c")
        XCTAssertEqual(try token("", target: "/ws?access_token="), "")
        XCTAssertNil(try token(""))
        XCTAssertNil(try token("", target: "/ws?token=x"))
    }

    func testBearerTokenOnAConstructedHead() {
        var head = HTTPRequestHead(method: "GET", path: "/", query: ["access_token": "q"], isHTTP11: true, headers: [])
        XCTAssertEqual(head.bearerToken, "q")
        head.headers = [("authorization", "Bearer h")]
        XCTAssertEqual(head.bearerToken, "h")
        head.headers = [("authorization", "Basic x")]
        XCTAssertEqual(head.bearerToken, "")
        head.headers = []
        head.query = [:]
        XCTAssertNil(head.bearerToken)
    }
}
