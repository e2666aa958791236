import Foundation
import StaffcastCore
import XCTest

/// Headers, the query, keep-alive, the WebSocket upgrade and the bearer token of a parsed head.
final class HTTPRequestParserHeaderTests: HTTPRequestParserTestCase {
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

    /// Lines ended by a lone LF are refused as soon as one is seen, not answered 408 after the
    /// header timeout while the parser waits for a CR LF CR LF that never comes (attack round).
    func testLinesEndedByALoneLFAreRefusedAtOnce() {
        XCTAssertEqual(status(parser.parse(bytes("GET /healthz HTTP/1.1\nHost: x\n\n"))), 400)
        XCTAssertEqual(status(parser.parse(bytes("GET /healthz HTTP/1.1\n"))), 400, "the first line is enough")
        XCTAssertEqual(status(parser.parse(bytes("GET /healthz HTTP/1.1\r\nHost: x\n"))), 400)
        guard case .needMore = parser.parse(bytes("GET /healthz HTTP/1.1\r\nHost: x\r\n")) else {
            return XCTFail("a head still arriving with CR LF line ends was refused")
        }
        guard case .needMore = parser.parse(bytes("GET /healthz HTTP/1.1\r")) else {
            return XCTFail("a CR waiting for its LF was refused")
        }
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
        let target = "/v1/search?a=1&b=hello+world&c=%41%62%2b&d&e=&f=caf%C3%A9&%6B%65%79=v&g=%zz&h=100%25&i=%4&j=a=b&&x=2"
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
            "x": "2", // a name given twice is refused now (testAQueryNameGivenTwiceIsRefused), not last-wins
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

    /// A query parameter given twice is refused rather than last-wins (attack round 4:
    /// ?priority=low&priority=urgent went out urgent); encoded and plain spellings are one name.
    func testAQueryNameGivenTwiceIsRefused() {
        XCTAssertEqual(status("POST /v1/events/x/messages?priority=low&priority=urgent HTTP/1.1\r\nHost: a\r\n\r\n"), 400)
        XCTAssertEqual(status("GET /x?a=1&%61=2 HTTP/1.1\r\nHost: a\r\n\r\n"), 400)
        XCTAssertEqual(head("GET /x?a=1&b=&c HTTP/1.1\r\nHost: a\r\n\r\n")?.query, ["a": "1", "b": "", "c": ""])
    }
}
