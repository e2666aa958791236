import Foundation
import StaffcastClient
#if canImport(Glibc)
import Glibc
#endif

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

    /// Reads until `buffer` holds at least `count` bytes (HTTP bodies, WebSocket frames).
    func need(_ count: Int, _ what: String, deadline: Date) throws {
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
}
