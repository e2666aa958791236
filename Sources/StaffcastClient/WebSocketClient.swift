import Crypto
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A small blocking WebSocket client (RFC 6455) over TCP, or TLS for `wss://` (`ClientStream`),
/// for `staffcast watch` and the tests. Blocking and single-threaded on purpose: the caller owns
/// the loop, and the tests need exact control of the bytes on the wire (oversized frames,
/// silence, raw closes).
public final class WebSocketClient {
    public enum Event: Equatable {
        case text(String)
        case binary([UInt8])
        case close(code: UInt16, reason: String)
    }

    private let stream: ClientStream
    public private(set) var responseHeaders: [String: String] = [:]
    public private(set) var isClosed = false

    /// Connects to `ws://host:port/path` or `wss://…` (http:// and https:// are accepted too)
    /// and performs the upgrade; `wss` verifies the server's certificate against `trust`.
    /// `headers` are sent as they are (e.g. Authorization).
    public init(url: String, headers: [String: String] = [:], subprotocol: String? = "staffcast.v1",
                timeout: TimeInterval = 10, trust: TLSTrust = TLSTrust()) throws(ClientError) {
        guard let components = URLComponents(string: url), let host = components.host,
              ["ws", "http", "wss", "https"].contains(components.scheme ?? "") else {
            throw ClientError.badURL(url)
        }
        let secure = components.scheme == "wss" || components.scheme == "https"
        let port = components.port ?? (secure ? 443 : 80)
        stream = try ClientStream(host: host, port: port, tls: secure ? trust : nil, timeout: timeout)
        var path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        if let q = components.percentEncodedQuery { path += "?" + q }
        var keyBytes = [UInt8](repeating: 0, count: 16)
        for i in keyBytes.indices { keyBytes[i] = UInt8.random(in: 0...255) }
        let key = Data(keyBytes).base64EncodedString()
        let hostHeader = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        var request = "GET \(path) HTTP/1.1\r\nHost: \(hostHeader):\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        request += "Sec-WebSocket-Key: \(key)\r\nSec-WebSocket-Version: 13\r\n"
        if let subprotocol { request += "Sec-WebSocket-Protocol: \(subprotocol)\r\n" }
        for (name, value) in headers { request += "\(name): \(value)\r\n" }
        request += "\r\n"
        do throws(ClientError) {
            try writeAll(Array(request.utf8))
            let (status, head) = try stream.readHead(deadline: Date().addingTimeInterval(timeout))
            responseHeaders = head
            guard status == 101 else {
                let length = Int(head["content-length"] ?? "") ?? 0
                let body = (try? readExactly(length, deadline: Date().addingTimeInterval(2))) ?? []
                throw ClientError.handshake(status: status, body: String(decoding: body, as: UTF8.self))
            }
            let expected = Data(Insecure.SHA1.hash(data: Data((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").utf8)))
                .base64EncodedString()
            guard head["sec-websocket-accept"] == expected else {
                throw ClientError.protocolViolation("bad Sec-WebSocket-Accept")
            }
        } catch {
            stream.shutdown()
            throw error
        }
    }

    /// Hands the socket and any bytes already read to the caller (the benchmark multiplexes
    /// thousands of connections with epoll); this client no longer touches it. Plain ws only.
    public func detach() -> (fd: Int32, buffered: [UInt8]) {
        isClosed = true
        return stream.detach()
    }

    // MARK: sending

    public func send(text: String) throws(ClientError) {
        try sendFrame(opcode: 0x1, payload: Array(text.utf8))
    }

    /// Sends one frame with any opcode and payload, masked as a client must.
    public func sendFrame(opcode: UInt8, payload: [UInt8], fin: Bool = true) throws(ClientError) {
        var frame: [UInt8] = [(fin ? 0x80 : 0) | opcode]
        let n = payload.count
        if n < 126 {
            frame.append(0x80 | UInt8(n))
        } else if n <= 0xFFFF {
            frame.append(0x80 | 126)
            frame += [UInt8(n >> 8), UInt8(n & 0xFF)]
        } else {
            frame.append(0x80 | 127)
            for shift in stride(from: 56, through: 0, by: -8) { frame.append(UInt8((n >> shift) & 0xFF)) }
        }
        let mask = (0..<4).map { _ in UInt8.random(in: 0...255) }
        frame += mask
        frame.reserveCapacity(frame.count + n)
        for (i, b) in payload.enumerated() { frame.append(b ^ mask[i & 3]) }
        try writeAll(frame)
    }

    /// Sends a close frame and shuts the socket.
    public func close(code: UInt16 = 1000) {
        guard !isClosed else { return }
        try? sendFrame(opcode: 0x8, payload: [UInt8(code >> 8), UInt8(code & 0xFF)])
        isClosed = true
        stream.shutdown()
    }

    // MARK: receiving

    /// The next text/binary/close event; nil when `timeout` passes first. Pings are answered.
    public func receive(timeout: TimeInterval) throws(ClientError) -> Event? {
        let deadline = Date().addingTimeInterval(timeout)
        var message: [UInt8] = []
        var messageOpcode: UInt8 = 0
        while true {
            guard let header = try readFrame(deadline: deadline) else { return nil }
            let (fin, opcode, payload) = header
            switch opcode {
            case 0x9:
                try sendFrame(opcode: 0xA, payload: payload)
            case 0xA:
                continue
            case 0x8:
                isClosed = true
                let code = payload.count >= 2 ? UInt16(payload[0]) << 8 | UInt16(payload[1]) : 1005
                return .close(code: code, reason: String(decoding: payload.dropFirst(2), as: UTF8.self))
            case 0x0, 0x1, 0x2:
                if opcode != 0 { messageOpcode = opcode }
                message += payload
                if fin {
                    return messageOpcode == 0x2 ? .binary(message) : .text(String(decoding: message, as: UTF8.self))
                }
            default:
                throw ClientError.protocolViolation("unknown opcode \(opcode)")
            }
        }
    }

    /// Reads one frame, or nil at the deadline.
    private func readFrame(deadline: Date) throws(ClientError) -> (Bool, UInt8, [UInt8])? {
        guard let head = try readExactlyOrNil(2, deadline: deadline) else { return nil }
        let fin = head[0] & 0x80 != 0
        let opcode = head[0] & 0x0F
        var length = Int(head[1] & 0x7F)
        let far = deadline.addingTimeInterval(5) // once a frame has started, let it finish
        if length == 126 {
            let ext = try readExactly(2, deadline: far)
            length = Int(ext[0]) << 8 | Int(ext[1])
        } else if length == 127 {
            let ext = try readExactly(8, deadline: far)
            length = ext.reduce(0) { $0 << 8 | Int($1) }
        }
        var mask: [UInt8]?
        if head[1] & 0x80 != 0 { mask = try readExactly(4, deadline: far) }
        var payload = try readExactly(length, deadline: far)
        if let mask { for i in payload.indices { payload[i] ^= mask[i & 3] } }
        return (fin, opcode, payload)
    }

    // MARK: socket plumbing

    private func writeAll(_ bytes: [UInt8]) throws(ClientError) {
        try stream.write(bytes)
    }

    private func readExactlyOrNil(_ count: Int, deadline: Date) throws(ClientError) -> [UInt8]? {
        do throws(ClientError) {
            guard try stream.fill(count, deadline: deadline) else { return nil }
        } catch {
            if case .closed = error { isClosed = true }
            throw error
        }
        return stream.take(count)
    }

    private func readExactly(_ count: Int, deadline: Date) throws(ClientError) -> [UInt8] {
        guard let out = try readExactlyOrNil(count, deadline: deadline) else { throw ClientError.timeout }
        return out
    }
}
