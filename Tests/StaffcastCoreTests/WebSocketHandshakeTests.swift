import Crypto
import StaffcastCore
import XCTest

/// The opening handshake the server answers itself over TLS (RFC 6455 4.2).
final class WebSocketHandshakeTests: XCTestCase {
    let sha1: ([UInt8]) -> [UInt8] = { Array(Insecure.SHA1.hash(data: $0)) }

    func head(method: String = "GET", _ headers: [(String, String)]) -> HTTPRequestHead {
        HTTPRequestHead(method: method, path: "/v1/ws", query: [:], isHTTP11: true,
                        headers: [("upgrade", "websocket"), ("connection", "Upgrade")] + headers.map { (name: $0.0, value: $0.1) })
    }

    let key = ("sec-websocket-key", "dGhlIHNhbXBsZSBub25jZQ==")
    let version = ("sec-websocket-version", "13")

    func testTheRFCExampleAndTheAnswer() throws {
        // RFC 6455 1.3: this key gives this accept value.
        XCTAssertEqual(WebSocketHandshake.acceptValue(key: "dGhlIHNhbXBsZSBub25jZQ==", sha1: sha1), "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
        let accepted = try WebSocketHandshake.check(head([key, version]), subprotocol: "staffcast.v1").get()
        XCTAssertEqual(accepted.subprotocol, nil)
        let answer = String(decoding: WebSocketHandshake.response(accepted, sha1: sha1), as: UTF8.self)
        XCTAssertEqual(answer, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n")
    }

    func testTheSubprotocolIsConfirmedWhenOffered() throws {
        let offered = ("sec-websocket-protocol", "staffcast.v1, staffcast.bearer.abc")
        let accepted = try WebSocketHandshake.check(head([key, version, offered]), subprotocol: "staffcast.v1").get()
        XCTAssertEqual(accepted.subprotocol, "staffcast.v1")
        XCTAssertTrue(String(decoding: WebSocketHandshake.response(accepted, sha1: sha1), as: UTF8.self)
            .contains("\r\nSec-WebSocket-Protocol: staffcast.v1\r\n"))
    }

    func refusal(_ head: HTTPRequestHead) -> String? {
        if case .failure(let e) = WebSocketHandshake.check(head, subprotocol: "staffcast.v1") {
            XCTAssertEqual(e.code, .invalid)
            return e.message
        }
        return nil
    }

    func testBadRequestsAreRefusedWithAReason() {
        XCTAssertEqual(refusal(head(method: "POST", [key, version]))?.contains("GET"), true)
        XCTAssertEqual(refusal(head([key]))?.contains("Sec-WebSocket-Version: 13"), true)
        XCTAssertEqual(refusal(head([key, ("sec-websocket-version", "8")]))?.contains("13"), true)
        XCTAssertEqual(refusal(head([version]))?.contains("Sec-WebSocket-Key"), true)
        XCTAssertEqual(refusal(head([("sec-websocket-key", "c2hvcnQ="), version]))?.contains("16"), true)
        XCTAssertEqual(refusal(head([("sec-websocket-key", "not base64!!"), version]))?.contains("base64"), true)
        XCTAssertEqual(refusal(head([key, version, ("sec-websocket-protocol", "chat")]))?.contains("staffcast.v1"), true)
    }
}
