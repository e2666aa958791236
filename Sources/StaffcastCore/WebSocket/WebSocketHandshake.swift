import Foundation

/// The server's half of the RFC 6455 opening handshake, for the WebSockets a service loop
/// serves itself (over TLS): whether an upgrade request is a valid one, and the `101` answer.
/// The admission (path, token, caps) is the HTTP front's, the same as for every WebSocket;
/// this only checks the WebSocket fields. SHA-1 is given by the caller (swift-crypto's
/// `Insecure.SHA1` in the server), so this stays free of any crypto of its own.
public enum WebSocketHandshake {
    /// RFC 6455 1.3: appended to the client's key before hashing.
    public static let guid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

    /// A valid request: the client's key and the subprotocol to confirm (nil: none offered).
    public struct Accepted: Sendable, Equatable {
        public var key: String
        public var subprotocol: String?
    }

    /// Checks the WebSocket fields of an upgrade request (`isWebSocketUpgrade` already holds).
    /// `subprotocol` is the one the server speaks: confirmed when offered; an offer without it
    /// is refused, as libwebsockets refuses it for plain WebSockets.
    public static func check(_ head: HTTPRequestHead, subprotocol: String) -> Result<Accepted, StaffcastError> {
        guard head.method == "GET" else {
            return .failure(.invalid("A WebSocket upgrade is a GET request."))
        }
        guard head.header("sec-websocket-version")?.trimmingSpaces == "13" else {
            return .failure(.invalid("This server speaks WebSocket version 13; send Sec-WebSocket-Version: 13."))
        }
        guard let key = head.header("sec-websocket-key")?.trimmingSpaces,
              let nonce = Data(base64Encoded: key), nonce.count == 16 else {
            return .failure(.invalid("Sec-WebSocket-Key must be 16 random bytes in base64."))
        }
        var confirmed: String?
        if let offered = head.header("sec-websocket-protocol") {
            let names = offered.split(separator: ",").map { String($0).trimmingSpaces }
            guard names.contains(subprotocol) else {
                return .failure(.invalid("Offer the WebSocket subprotocol \(subprotocol) (or none)."))
            }
            confirmed = subprotocol
        }
        return .success(Accepted(key: key, subprotocol: confirmed))
    }

    /// `Sec-WebSocket-Accept`: base64 of SHA-1 of the key and the GUID.
    public static func acceptValue(key: String, sha1: ([UInt8]) -> [UInt8]) -> String {
        Data(sha1(Array((key + guid).utf8))).base64EncodedString()
    }

    /// The whole `101 Switching Protocols` answer.
    public static func response(_ accepted: Accepted, sha1: ([UInt8]) -> [UInt8]) -> [UInt8] {
        var text = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        text += "Sec-WebSocket-Accept: \(acceptValue(key: accepted.key, sha1: sha1))\r\n"
        if let name = accepted.subprotocol { text += "Sec-WebSocket-Protocol: \(name)\r\n" }
        text += "\r\n"
        return Array(text.utf8)
    }
}
