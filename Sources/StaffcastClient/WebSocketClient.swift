import Crypto
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A small blocking WebSocket client (RFC 6455) over a plain TCP socket, for `staffcast watch`
/// and the tests. Blocking and single-threaded on purpose: the caller owns the loop, and the
/// tests need exact control of the bytes on the wire (oversized frames, silence, raw closes).
/// No TLS: put staffcast behind a TLS terminator, or use wss-capable tools, for that.
public final class WebSocketClient {
    public enum Event: Equatable {
        case text(String)
        case binary([UInt8])
        case close(code: UInt16, reason: String)
    }

    private var fd: Int32
    private var buffer: [UInt8] = []
    public private(set) var responseHeaders: [String: String] = [:]
    public private(set) var isClosed = false

    /// Connects to `ws://host:port/path` (http:// is accepted too) and performs the upgrade.
    /// `headers` are sent as they are (e.g. Authorization).
    public init(url: String, headers: [String: String] = [:], subprotocol: String? = "staffcast.v1",
                timeout: TimeInterval = 10) throws(ClientError) {
        guard let components = URLComponents(string: url), let host = components.host,
              ["ws", "http"].contains(components.scheme ?? "") else {
            throw ClientError.badURL(url)
        }
        let port = components.port ?? 80
        fd = try Self.connect(host: host, port: port, timeout: timeout)
        var path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        if let q = components.percentEncodedQuery { path += "?" + q }
        var keyBytes = [UInt8](repeating: 0, count: 16)
        for i in keyBytes.indices { keyBytes[i] = UInt8.random(in: 0...255) }
        let key = Data(keyBytes).base64EncodedString()
        var request = "GET \(path) HTTP/1.1\r\nHost: \(host):\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        request += "Sec-WebSocket-Key: \(key)\r\nSec-WebSocket-Version: 13\r\n"
        if let subprotocol { request += "Sec-WebSocket-Protocol: \(subprotocol)\r\n" }
        for (name, value) in headers { request += "\(name): \(value)\r\n" }
        request += "\r\n"
        do throws(ClientError) {
            try writeAll(Array(request.utf8))
            let (status, head) = try readHead(deadline: Date().addingTimeInterval(timeout))
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
            Glibc.close(fd)
            fd = -1
            throw error
        }
    }

    deinit { if fd >= 0 { Glibc.close(fd) } }

    /// Hands the socket and any bytes already read to the caller (the benchmark multiplexes
    /// thousands of connections with epoll); this client no longer touches it.
    public func detach() -> (fd: Int32, buffered: [UInt8]) {
        let out = (fd, buffer)
        fd = -1
        buffer = []
        isClosed = true
        return out
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
        shutdown(fd, Int32(SHUT_RDWR))
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

    private static func connect(host: String, port: Int, timeout: TimeInterval) throws(ClientError) -> Int32 {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var result: UnsafeMutablePointer<addrinfo>?
        let rc = getaddrinfo(host, String(port), &hints, &result)
        guard rc == 0, let first = result else {
            throw ClientError.connect("cannot resolve \(host): \(String(cString: gai_strerror(rc)))")
        }
        defer { freeaddrinfo(result) }
        var lastError = "no address"
        var candidate: UnsafeMutablePointer<addrinfo>? = first
        while let ai = candidate {
            candidate = ai.pointee.ai_next
            let s = socket(ai.pointee.ai_family, ai.pointee.ai_socktype, ai.pointee.ai_protocol)
            if s < 0 { continue }
            let flags = fcntl(s, F_GETFL)
            _ = fcntl(s, F_SETFL, flags | O_NONBLOCK)
            var ok = Glibc.connect(s, ai.pointee.ai_addr, ai.pointee.ai_addrlen) == 0
            if !ok && errno == EINPROGRESS {
                var pfd = pollfd(fd: s, events: Int16(POLLOUT), revents: 0)
                if poll(&pfd, 1, Int32(timeout * 1000)) == 1 {
                    var err: Int32 = 0
                    var len = socklen_t(MemoryLayout<Int32>.size)
                    getsockopt(s, SOL_SOCKET, SO_ERROR, &err, &len)
                    ok = err == 0
                    if !ok { lastError = String(cString: strerror(err)) }
                } else {
                    lastError = "timed out"
                }
            } else if !ok {
                lastError = String(cString: strerror(errno))
            }
            if ok {
                var one: Int32 = 1
                setsockopt(s, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
                return s
            }
            Glibc.close(s)
        }
        throw ClientError.connect("\(host):\(port): \(lastError)")
    }

    private func writeAll(_ bytes: [UInt8]) throws(ClientError) {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n < 0 {
                if errno == EAGAIN || errno == EINTR {
                    var pfd = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                    _ = poll(&pfd, 1, 1000)
                    continue
                }
                throw ClientError.connect("send failed: \(String(cString: strerror(errno)))")
            }
            offset += n
        }
    }

    /// Fills the buffer with at least `count` bytes; false at the deadline.
    private func fill(_ count: Int, deadline: Date) throws(ClientError) -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while buffer.count < count {
            let remaining = deadline.timeIntervalSinceNow
            if remaining <= 0 { return false }
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&pfd, 1, Int32(min(remaining, 1) * 1000) + 1)
            if ready == 0 { continue }
            if ready < 0 {
                if errno == EINTR { continue }
                throw ClientError.connect("poll failed")
            }
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n == 0 {
                isClosed = true
                throw ClientError.closed(code: 1006, reason: "connection dropped")
            }
            if n < 0 {
                if errno == EAGAIN || errno == EINTR { continue }
                isClosed = true
                throw ClientError.closed(code: 1006, reason: String(cString: strerror(errno)))
            }
            buffer += chunk[0..<n]
        }
        return true
    }

    private func readExactlyOrNil(_ count: Int, deadline: Date) throws(ClientError) -> [UInt8]? {
        guard try fill(count, deadline: deadline) else { return nil }
        let out = Array(buffer[0..<count])
        buffer.removeFirst(count)
        return out
    }

    private func readExactly(_ count: Int, deadline: Date) throws(ClientError) -> [UInt8] {
        guard let out = try readExactlyOrNil(count, deadline: deadline) else { throw ClientError.timeout }
        return out
    }

    private func readHead(deadline: Date) throws(ClientError) -> (Int, [String: String]) {
        while true {
            if let end = buffer.firstRange(of: [13, 10, 13, 10]) {
                let text = String(decoding: buffer[..<end.lowerBound], as: UTF8.self)
                buffer.removeFirst(end.upperBound)
                var lines = text.components(separatedBy: "\r\n")
                let statusLine = lines.removeFirst().split(separator: " ")
                guard statusLine.count >= 2, let status = Int(statusLine[1]) else {
                    throw ClientError.protocolViolation("bad status line")
                }
                var headers: [String: String] = [:]
                for line in lines {
                    guard let colon = line.firstIndex(of: ":") else { continue }
                    headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                }
                return (status, headers)
            }
            guard try fill(buffer.count + 1, deadline: deadline) else { throw ClientError.timeout }
        }
    }
}
