import Foundation
import StaffcastClient
#if canImport(Glibc)
import Glibc
#endif

/// Why a raw socket operation failed, with what had arrived so far (for the failure message).
struct RawSocketError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// One HTTP/1.1 response exactly as it came off the wire.
struct RawHTTPResponse: CustomStringConvertible {
    var statusLine: String
    var status: Int
    var headers: [(name: String, value: String)]
    var body: [UInt8]

    /// The first header with this name (case-insensitive).
    func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    /// Every header with this name (case-insensitive).
    func headers(_ name: String) -> [String] {
        headers.filter { $0.name.lowercased() == name.lowercased() }.map(\.value)
    }

    var bodyText: String { String(decoding: body, as: UTF8.self) }

    /// The body as a JSON object, or nil.
    var json: [String: Any]? { try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] }

    /// `error.code` of a JSON error body, or nil.
    var errorCode: String? { (json?["error"] as? [String: Any])?["code"] as? String }

    var description: String {
        "\(statusLine) [\(headers.map { "\($0.name): \($0.value)" }.joined(separator: "; "))] \(bodyText.prefix(300))"
    }
}

/// A raw TCP client with deadlines (Glibc sockets and poll), for tests that need exact control
/// of the bytes on the wire and of when they are read: pipelined requests in one `send()`,
/// bodies split across writes, a request head that never ends, a reader that never reads.
/// IPv4 only (the test servers listen on 127.0.0.1). Not thread-safe: one owner at a time.
final class RawSocket {
    enum ReadOutcome: Equatable {
        case data(Int)
        case eof
        case reset(String)
        case timeout
    }

    enum CloseOutcome: Equatable {
        /// The peer finished the stream (FIN).
        case eof
        /// The connection was reset or otherwise failed.
        case reset(String)
        /// Still open at the deadline.
        case open
    }

    private(set) var fd: Int32
    let port: Int
    /// Bytes read but not yet consumed by a parser.
    var buffer: [UInt8] = []
    /// Every byte read from the socket so far.
    private(set) var totalRead = 0

    /// Connects to 127.0.0.1:`port`. `receiveBuffer` (SO_RCVBUF) is set before the connect, so
    /// the advertised TCP window stays that small.
    init(port: Int, host: String = "127.0.0.1", receiveBuffer: Int? = nil, timeout: TimeInterval = 5) throws {
        self.port = port
        let s = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard s >= 0 else { throw RawSocketError("socket(): \(String(cString: strerror(errno)))") }
        fd = s
        if let receiveBuffer {
            var size = Int32(receiveBuffer)
            setsockopt(s, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var one: Int32 = 1
        setsockopt(s, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        _ = fcntl(s, F_SETFL, fcntl(s, F_GETFL) | O_NONBLOCK)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else {
            Glibc.close(s)
            fd = -1
            throw RawSocketError("not an IPv4 address: \(host)")
        }
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(s, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        if rc != 0 {
            var failure = String(cString: strerror(errno))
            var connected = false
            if errno == EINPROGRESS {
                switch PendingConnect.wait(s, timeout: timeout) {
                case .connected: connected = true
                case .failed(let reason): failure = reason
                case .timedOut: failure = "timed out after \(timeout) s"
                }
            }
            if !connected {
                Glibc.close(s)
                fd = -1
                throw RawSocketError("connect to \(host):\(port): \(failure)")
            }
        }
    }

    deinit { close() }

    func close() {
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
    }

    /// The receive buffer the kernel actually gave this socket (Linux doubles the request).
    var receiveBufferSize: Int {
        var size: Int32 = 0
        var len = socklen_t(MemoryLayout<Int32>.size)
        getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, &len)
        return Int(size)
    }

    // MARK: writing

    /// Exactly one `send()` call carrying all of `bytes`; throws if the kernel took less.
    func sendOnce(_ bytes: [UInt8]) throws {
        let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        guard n == bytes.count else {
            throw RawSocketError("one send() of \(bytes.count) bytes wrote \(n) (\(String(cString: strerror(errno))))")
        }
    }

    /// Writes all of `bytes` (several `send()`s if the socket is full), within `timeout`.
    func send(_ bytes: [UInt8], timeout: TimeInterval = 5) throws {
        let deadline = Date().addingTimeInterval(timeout)
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n < 0 {
                guard errno == EAGAIN || errno == EINTR else {
                    throw RawSocketError("send failed after \(offset) of \(bytes.count) bytes: \(String(cString: strerror(errno)))")
                }
                guard Date() < deadline else { throw RawSocketError("send of \(bytes.count) bytes timed out at \(offset)") }
                var pfd = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                _ = poll(&pfd, 1, 100)
                continue
            }
            offset += n
        }
    }

    func send(_ text: String, timeout: TimeInterval = 5) throws { try send(Array(text.utf8), timeout: timeout) }

    /// One non-blocking `send()`; false when the socket refused it (closed, reset or full).
    func trySend(_ bytes: [UInt8]) -> Bool {
        let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
        return n == bytes.count
    }

    // MARK: reading

    /// Waits until `deadline` for bytes, and appends what one `recv()` returns to `buffer`.
    @discardableResult
    func readSome(deadline: Date) -> ReadOutcome {
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let remaining = deadline.timeIntervalSinceNow
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&pfd, 1, Int32(max(0, min(remaining, 1)) * 1000))
            if ready < 0 {
                if errno == EINTR { continue }
                return .reset("poll: \(String(cString: strerror(errno)))")
            }
            if ready == 0 {
                if remaining <= 0 { return .timeout }
                continue
            }
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n > 0 {
                buffer += chunk[0..<n]
                totalRead += n
                return .data(n)
            }
            if n == 0 { return .eof }
            if errno == EAGAIN || errno == EINTR { continue }
            return .reset(String(cString: strerror(errno)))
        }
    }

    /// Reads until `predicate(buffer)` holds; throws at EOF, reset or the deadline.
    func read(until what: String, deadline: Date, _ predicate: ([UInt8]) -> Bool) throws {
        while !predicate(buffer) {
            switch readSome(deadline: deadline) {
            case .data: continue
            case .timeout:
                throw RawSocketError("\(what) did not arrive before the deadline; \(buffer.count) bytes buffered: \(preview)")
            case .eof:
                throw RawSocketError("the server closed the connection before \(what); \(buffer.count) bytes buffered: \(preview)")
            case .reset(let why):
                throw RawSocketError("the connection failed (\(why)) before \(what); \(buffer.count) bytes buffered: \(preview)")
            }
        }
    }

    private var preview: String {
        String(decoding: buffer.prefix(200), as: UTF8.self).debugDescription
    }

    private func need(_ count: Int, _ what: String, deadline: Date) throws {
        try read(until: what, deadline: deadline) { $0.count >= count }
    }

    /// Reads and discards everything until the peer closes or resets, or `deadline`.
    /// Returns how it ended and how many bytes were discarded on the way.
    func waitForClose(deadline: Date) -> (outcome: CloseOutcome, discarded: Int) {
        var discarded = buffer.count
        buffer.removeAll()
        while true {
            switch readSome(deadline: deadline) {
            case .data(let n):
                discarded += n
                buffer.removeAll(keepingCapacity: true)
            case .eof: return (.eof, discarded)
            case .reset(let why): return (.reset(why), discarded)
            case .timeout: return (.open, discarded)
            }
        }
    }

    // MARK: HTTP/1.1

    /// A request's bytes: method, path, `Host`, the headers given, `Content-Length` when there
    /// is a body (unless `contentLength` is false), the body.
    static func request(_ method: String, _ path: String, port: Int, headers: [(String, String)] = [],
                        body: [UInt8]? = nil, contentLength: Bool = true) -> [UInt8] {
        var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if let body, contentLength { head += "Content-Length: \(body.count)\r\n" }
        head += "\r\n"
        return Array(head.utf8) + (body ?? [])
    }

    /// Reads one complete response (head and body: by Content-Length, chunked, or until EOF).
    /// 1xx, 204, 304 and `headOnly` responses have no body; bytes after the response stay in
    /// `buffer` (the next pipelined response, or WebSocket frames after a 101).
    func readResponse(deadline: Date, headOnly: Bool = false) throws -> RawHTTPResponse {
        try read(until: "a complete response head", deadline: deadline) { $0.firstRange(of: [13, 10, 13, 10]) != nil }
        let end = buffer.firstRange(of: [13, 10, 13, 10])!
        let head = String(decoding: buffer[..<end.lowerBound], as: UTF8.self)
        buffer.removeFirst(end.upperBound)
        var lines = head.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst()
        let parts = statusLine.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), let status = Int(parts[1]) else {
            throw RawSocketError("not an HTTP status line: \(statusLine.debugDescription)")
        }
        var headers: [(name: String, value: String)] = []
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else {
                throw RawSocketError("not a header line: \(line.debugDescription) in \(head.debugDescription)")
            }
            headers.append((String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
        }
        var response = RawHTTPResponse(statusLine: statusLine, status: status, headers: headers, body: [])
        if headOnly || (100..<200).contains(status) || status == 204 || status == 304 { return response }
        if response.header("transfer-encoding")?.lowercased().contains("chunked") == true {
            response.body = try readChunkedBody(deadline: deadline)
        } else if let lengthText = response.header("content-length") {
            guard let length = Int(lengthText), length >= 0 else {
                throw RawSocketError("bad Content-Length \(lengthText.debugDescription)")
            }
            try need(length, "the \(length)-byte body of \(statusLine)", deadline: deadline)
            response.body = Array(buffer.prefix(length))
            buffer.removeFirst(length)
        } else {
            // No length: the body ends at EOF.
            while true {
                switch readSome(deadline: deadline) {
                case .data: continue
                case .eof:
                    response.body = buffer
                    buffer.removeAll()
                    return response
                case .timeout: throw RawSocketError("\(statusLine) without a length did not end before the deadline")
                case .reset(let why): throw RawSocketError("\(statusLine) without a length: connection failed (\(why))")
                }
            }
        }
        return response
    }

    private func readChunkedBody(deadline: Date) throws -> [UInt8] {
        var body: [UInt8] = []
        while true {
            try read(until: "a chunk size line", deadline: deadline) { $0.firstRange(of: [13, 10]) != nil }
            let lineEnd = buffer.firstRange(of: [13, 10])!
            let line = String(decoding: buffer[..<lineEnd.lowerBound], as: UTF8.self)
            buffer.removeFirst(lineEnd.upperBound)
            let sizeText = line.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
            guard let size = Int(sizeText, radix: 16), size >= 0 else {
                throw RawSocketError("bad chunk size line \(line.debugDescription)")
            }
            if size == 0 {
                // Trailers, then an empty line.
                while true {
                    try read(until: "the end of the chunked trailers", deadline: deadline) { $0.firstRange(of: [13, 10]) != nil }
                    let end = buffer.firstRange(of: [13, 10])!
                    let empty = end.lowerBound == 0
                    buffer.removeFirst(end.upperBound)
                    if empty { return body }
                }
            }
            try need(size + 2, "a \(size)-byte chunk", deadline: deadline)
            body += buffer.prefix(size)
            guard buffer[size] == 13, buffer[size + 1] == 10 else { throw RawSocketError("a chunk not followed by CRLF") }
            buffer.removeFirst(size + 2)
        }
    }

    /// Opens a connection, sends one GET, reads the response within `timeout`, closes.
    static func get(port: Int, _ path: String, headers: [(String, String)] = [], timeout: TimeInterval) throws -> RawHTTPResponse {
        let deadline = Date().addingTimeInterval(timeout)
        let socket = try RawSocket(port: port, timeout: timeout)
        defer { socket.close() }
        try socket.send(request("GET", path, port: port, headers: headers), timeout: timeout)
        return try socket.readResponse(deadline: deadline)
    }

    // MARK: WebSocket (RFC 6455), just enough to upgrade, send text and read frames

    /// Sends a WebSocket upgrade for `path` (optionally with a bearer token) and reads the
    /// response: the 101 head (frames after it stay in `buffer`), or a refusal with its body.
    func upgrade(path: String = "/v1/ws", token: String?, extraHeaders: [(String, String)] = [],
                 timeout: TimeInterval = 10) throws -> RawHTTPResponse {
        let key = Data((0..<16).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
        var headers: [(String, String)] = [("Upgrade", "websocket"), ("Connection", "Upgrade"),
                                           ("Sec-WebSocket-Key", key), ("Sec-WebSocket-Version", "13"),
                                           ("Sec-WebSocket-Protocol", "staffcast.v1")]
        if let token { headers.append(("Authorization", "Bearer \(token)")) }
        headers += extraHeaders
        try send(Self.request("GET", path, port: port, headers: headers), timeout: timeout)
        return try readResponse(deadline: Date().addingTimeInterval(timeout))
    }

    /// Sends one masked text frame.
    func sendWebSocketText(_ text: String) throws {
        let payload = Array(text.utf8)
        var frame: [UInt8] = [0x81]
        if payload.count < 126 {
            frame.append(0x80 | UInt8(payload.count))
        } else if payload.count <= 0xFFFF {
            frame += [0x80 | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        } else {
            frame.append(0x80 | 127)
            for shift in stride(from: 56, through: 0, by: -8) { frame.append(UInt8((payload.count >> shift) & 0xFF)) }
        }
        let mask = (0..<4).map { _ in UInt8.random(in: 0...255) }
        frame += mask
        for (i, b) in payload.enumerated() { frame.append(b ^ mask[i & 3]) }
        try send(frame)
    }

    /// The next frame from the server (opcode and unmasked payload); nil if none starts before
    /// `deadline`. Throws when the connection ends.
    func readWebSocketFrame(deadline: Date) throws -> (opcode: UInt8, payload: [UInt8])? {
        while buffer.count < 2 {
            switch readSome(deadline: deadline) {
            case .data: continue
            case .timeout: return nil
            case .eof: throw RawSocketError("the server closed the connection (EOF) between frames")
            case .reset(let why): throw RawSocketError("the connection failed between frames: \(why)")
            }
        }
        let far = Date().addingTimeInterval(5) // a frame that has started must finish
        let opcode = buffer[0] & 0x0F
        let masked = buffer[1] & 0x80 != 0
        var length = Int(buffer[1] & 0x7F)
        var offset = 2
        if length == 126 {
            try need(4, "a frame length", deadline: far)
            length = Int(buffer[2]) << 8 | Int(buffer[3])
            offset = 4
        } else if length == 127 {
            try need(10, "a frame length", deadline: far)
            length = buffer[2..<10].reduce(0) { $0 << 8 | Int($1) }
            offset = 10
        }
        let maskOffset = offset
        if masked { offset += 4 }
        try need(offset + length, "a \(length)-byte frame", deadline: far)
        var payload = Array(buffer[offset..<(offset + length)])
        if masked {
            let mask = Array(buffer[maskOffset..<(maskOffset + 4)])
            for i in payload.indices { payload[i] ^= mask[i & 3] }
        }
        buffer.removeFirst(offset + length)
        return (opcode, payload)
    }
}
