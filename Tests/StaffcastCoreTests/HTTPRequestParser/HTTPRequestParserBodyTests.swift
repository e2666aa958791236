import Foundation
import StaffcastCore
import XCTest

/// Request bodies: Content-Length, chunked (sizes, extensions, trailers and their limits), and the
/// one Transfer-Encoding that is read.
final class HTTPRequestParserBodyTests: HTTPRequestParserTestCase {
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
}
