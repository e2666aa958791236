import CStaffcastTLS
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// How a client trusts `https://` and `wss://` servers.
public struct TLSTrust: Sendable, Equatable {
    /// PEM file of the CA (or CAs) to trust instead of the system's store (`--ca-file`).
    public var caFile: String?

    public init(caFile: String? = nil) { self.caFile = caFile }
}

/// One blocking client connection to a staffcast server, for `APIClient` and
/// `WebSocketClient`: a TCP socket, with TLS over it (OpenSSL) for `https://` and `wss://`,
/// and a read buffer. Owns its socket and its OpenSSL handles (`SSL_CTX`, `SSL`) and frees
/// them in `deinit`; used by one thread at a time.
///
/// Why OpenSSL here and not URLSession or libwebsockets: FoundationNetworking on Linux cannot
/// be told to trust a private CA (its CA-file setting is Android-only), and libwebsockets
/// belongs to the server's transport. The WebSocket client was already hand-written on a
/// socket so the tests control every byte; TLS slots under it here, certificate verification
/// (chain and host name or IP) included.
final class ClientStream {
    private var fd: Int32
    private var context: OpaquePointer?
    private var ssl: OpaquePointer?
    /// Bytes read and not yet taken.
    var buffer: [UInt8] = []
    let isTLS: Bool
    /// host:port, for errors.
    private let endpoint: String
    private let host: String
    private let port: Int
    /// True once any byte arrived (a plain client meeting a TLS port gets none, or a TLS record).
    private var receivedAny = false

    /// Connects to `host:port` within `timeout`; with `tls`, completes a verified TLS handshake.
    init(host: String, port: Int, tls: TLSTrust?, timeout: TimeInterval) throws(ClientError) {
        let host = host.trimmingCharacters(in: CharacterSet(charactersIn: "[]")) // an IPv6 literal
        endpoint = "\(host):\(port)"
        self.host = host
        self.port = port
        fd = try Self.connect(host: host, port: port, timeout: timeout)
        isTLS = tls != nil
        guard let tls else { return }
        do throws(ClientError) {
            try handshake(host: host, trust: tls, deadline: Date().addingTimeInterval(timeout))
        } catch {
            release()
            throw error
        }
    }

    deinit { release() }

    private func release() {
        if let ssl { SSL_free(ssl) }
        if let context { SSL_CTX_free(context) }
        ssl = nil
        context = nil
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
    }

    /// Hands the plain socket and any bytes already read to the caller (the benchmark's epoll);
    /// this stream no longer touches it. Not for TLS streams.
    func detach() -> (fd: Int32, buffered: [UInt8]) {
        precondition(!isTLS, "a TLS stream cannot be detached from its session")
        defer { fd = -1; buffer = [] }
        return (fd, buffer)
    }

    /// Ends the connection (both directions) without freeing anything yet.
    func shutdown() {
        if let ssl { _ = SSL_shutdown(ssl) }
        if fd >= 0 { _ = Glibc.shutdown(fd, Int32(SHUT_RDWR)) }
    }

    // MARK: TLS

    private func handshake(host: String, trust: TLSTrust, deadline: Date) throws(ClientError) {
        // OpenSSL writes with write(2): a peer that has gone would raise SIGPIPE and end the
        // process instead of returning EPIPE. A client has no use for SIGPIPE.
        signal(SIGPIPE, SIG_IGN)
        if let caFile = trust.caFile, !FileManager.default.isReadableFile(atPath: caFile) {
            throw ClientError.tls("cannot read the CA file \(caFile)")
        }
        guard let context = sct_client_context(trust.caFile) else {
            throw ClientError.tls("cannot load \(trust.caFile.map { "the CA file \($0)" } ?? "the system's trusted CAs"): \(Self.lastError())")
        }
        self.context = context
        guard let ssl = SSL_new(context) else { throw ClientError.tls("cannot start TLS: \(Self.lastError())") }
        self.ssl = ssl
        SSL_set_fd(ssl, fd)
        let isIP = host.contains(":") || host.split(separator: ".").count == 4 && host.allSatisfy { $0.isNumber || $0 == "." }
        guard sct_set_peer_name(ssl, host, isIP ? 1 : 0) == 1 else {
            throw ClientError.tls("cannot verify the server name \(host): \(Self.lastError())")
        }
        while true {
            let rc = SSL_connect(ssl)
            if rc == 1 { return }
            let error = SSL_get_error(ssl, rc)
            if error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE {
                guard wait(forWriting: error == SSL_ERROR_WANT_WRITE, deadline: deadline) else {
                    throw ClientError.connect("the TLS handshake with \(host) did not finish in time (is it a TLS port?)")
                }
                continue
            }
            if let reason = sct_verify_error(ssl) {
                let hint = trust.caFile == nil
                    ? "pass --ca-file FILE (or set STAFFCAST_CA_FILE) with the CA that signed it"
                    : "it was not signed by the CA in \(trust.caFile!) or does not name \(host)"
                throw ClientError.tls("the server's certificate is not trusted (\(String(cString: reason))): \(hint)")
            }
            let detail = Self.lastError()
            // A plain HTTP server answers a ClientHello with a plain-text 400: OpenSSL then reads
            // "HTTP/1.1" as a record header and says "wrong version number" (or "packet length
            // too long"), which tells a person nothing.
            if detail.contains("wrong version number") || detail.contains("packet length too long") || detail.contains("record layer failure") {
                throw ClientError.tls("\(endpoint) answers in plain HTTP, not TLS: use http:// (and ws://) for this server, or give it tls_cert and tls_key")
            }
            throw ClientError.connect("the TLS handshake with \(host) failed\(detail.isEmpty ? " (is it a TLS port?)" : ": \(detail)")")
        }
    }

    private static func lastError() -> String {
        var text = [CChar](repeating: 0, count: 256)
        sct_last_error(&text, text.count)
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    // MARK: reading and writing

    /// Waits until the socket is readable (or writable); false at the deadline.
    private func wait(forWriting: Bool, deadline: Date) -> Bool {
        while true {
            let remaining = deadline.timeIntervalSinceNow
            if remaining <= 0 { return false }
            var pfd = pollfd(fd: fd, events: Int16(forWriting ? POLLOUT : POLLIN), revents: 0)
            let ready = poll(&pfd, 1, Int32(min(remaining, 1) * 1000) + 1)
            if ready > 0 { return true }
            if ready < 0 && errno != EINTR { return true } // let the next call report it
        }
    }

    /// Writes all of `bytes`.
    func write(_ bytes: [UInt8], deadline: Date = .distantFuture) throws(ClientError) {
        var offset = 0
        while offset < bytes.count {
            if let ssl {
                let n = bytes[offset...].withUnsafeBytes { SSL_write(ssl, $0.baseAddress, Int32($0.count)) }
                if n > 0 { offset += Int(n); continue }
                let error = SSL_get_error(ssl, n)
                if error == SSL_ERROR_WANT_WRITE || error == SSL_ERROR_WANT_READ {
                    guard wait(forWriting: error == SSL_ERROR_WANT_WRITE, deadline: deadline) else { throw ClientError.timeout }
                    continue
                }
                let detail = Self.lastError()
                throw ClientError.connect("send failed: \(detail.isEmpty ? String(cString: strerror(errno)) : detail)")
            }
            let n = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n < 0 {
                if errno == EAGAIN || errno == EINTR {
                    guard wait(forWriting: true, deadline: deadline) else { throw ClientError.timeout }
                    continue
                }
                throw ClientError.connect("send failed: \(String(cString: strerror(errno)))")
            }
            offset += n
        }
    }

    /// Reads what is there into `buffer`: the count read, 0 at the end of the stream, nil at
    /// the deadline.
    private func readSome(deadline: Date) throws(ClientError) -> Int? {
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            if let ssl {
                let n = chunk.withUnsafeMutableBytes { SSL_read(ssl, $0.baseAddress, Int32($0.count)) }
                if n > 0 {
                    buffer += chunk[0..<Int(n)]
                    return Int(n)
                }
                let error = SSL_get_error(ssl, n)
                if error == SSL_ERROR_ZERO_RETURN { return 0 }
                if error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE {
                    guard wait(forWriting: error == SSL_ERROR_WANT_WRITE, deadline: deadline) else { return nil }
                    continue
                }
                if error == SSL_ERROR_SYSCALL && errno == 0 { return 0 }
                let detail = Self.lastError()
                throw ClientError.closed(code: 1006, reason: detail.isEmpty ? String(cString: strerror(errno)) : detail)
            }
            guard wait(forWriting: false, deadline: deadline) else { return nil }
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n > 0 {
                buffer += chunk[0..<n]
                return n
            }
            if n == 0 { return 0 }
            if errno == EAGAIN || errno == EINTR { continue }
            if errno == ECONNRESET && !receivedAny {
                // A TLS port resets a plain request: say so when it is one.
                throw plainToTLSError(answered: Self.speaksTLS(host: host, port: port))
            }
            throw ClientError.closed(code: 1006, reason: String(cString: strerror(errno)))
        }
    }

    /// Fills `buffer` to at least `count` bytes; false at the deadline. The end of the stream
    /// throws `closed(1006)`.
    func fill(_ count: Int, deadline: Date) throws(ClientError) -> Bool {
        while buffer.count < count {
            guard let n = try readSome(deadline: deadline) else { return false }
            if n == 0 {
                if !isTLS && !receivedAny { throw plainToTLSError(answered: Self.speaksTLS(host: host, port: port)) }
                throw ClientError.closed(code: 1006, reason: "connection dropped")
            }
            if !isTLS && !receivedAny, let first = buffer.first, first == 0x15 || first == 0x16 {
                throw plainToTLSError(answered: true) // a TLS alert or handshake record
            }
            receivedAny = true
        }
        return true
    }

    /// True when host:port completes (or gets as far as the certificate of) a TLS handshake: asked
    /// only after a plain request was dropped without a byte, to tell "use https://" from a
    /// server that merely went away.
    static func speaksTLS(host: String, port: Int) -> Bool {
        do {
            _ = try ClientStream(host: host, port: port, tls: TLSTrust(caFile: nil), timeout: 2)
            return true
        } catch {
            if case .tls(let text) = error, text.contains("certificate is not trusted") { return true }
            return false
        }
    }

    /// A plain (http://, ws://) request that a TLS port closed without an answer, or answered
    /// with a TLS record (`answered`: known to be TLS). Only the second is certain (and a TLS error: retrying cannot help);
    /// the first stays a dropped connection, which a reconnecting client retries.
    private func plainToTLSError(answered: Bool) -> ClientError {
        answered
            ? .tls("\(endpoint) speaks TLS: use https:// (and wss://) for this server")
            : .closed(code: 1006, reason: "\(endpoint) closed the connection without answering; if the server uses TLS (tls_cert), use https:// (and wss://)")
    }

    /// Reads until the peer ends the stream (at most `limit` bytes); false at the deadline.
    func readToEnd(limit: Int, deadline: Date) throws(ClientError) -> Bool {
        while buffer.count <= limit {
            guard let n = try readSome(deadline: deadline) else { return false }
            if n == 0 { return true }
        }
        throw ClientError.protocolViolation("the reply is larger than \(limit) bytes")
    }

    /// Takes `count` bytes from the front of the buffer.
    func take(_ count: Int) -> [UInt8] {
        let out = Array(buffer[0..<count])
        buffer.removeFirst(count)
        return out
    }

    /// Reads an HTTP response head: the status and the headers (names in lower case).
    func readHead(deadline: Date) throws(ClientError) -> (status: Int, headers: [String: String]) {
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
            if buffer.count > 65_536 { throw ClientError.protocolViolation("response head larger than 64 KiB") }
            guard try fill(buffer.count + 1, deadline: deadline) else { throw ClientError.timeout }
        }
    }

    // MARK: TCP

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
                switch PendingConnect.wait(s, timeout: timeout) {
                case .connected: ok = true
                case .failed(let reason): lastError = reason
                case .timedOut: lastError = "timed out"
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
}
