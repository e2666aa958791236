import CBenchEpoll
import CStaffcastTLS
import Foundation
import Glibc

/// The benchmark's sockets, plain or TLS (`--server https://…`: wss and https). Every
/// connect, send, recv and close of the bench goes through here, so each scenario runs the
/// same code over both and the only difference is the TLS.
///
/// TLS is OpenSSL with memory BIOs (`WireTLS`), so it fits the bench's non-blocking epoll
/// loops unchanged: `recv` reads the socket, feeds OpenSSL and returns plaintext (driving the
/// handshake on the way); `send` encrypts and writes. Plaintext sent before the handshake is
/// done is kept and written when it completes. The server's certificate is not verified: the
/// bench measures a server it started itself.
///
/// Thread use: a descriptor's state is touched only by the thread that owns the descriptor
/// (one subscriber loop, one publisher); the table has one slot per possible descriptor.
enum Wire {
    nonisolated(unsafe) static var tls = false
    nonisolated(unsafe) private static var context: OpaquePointer?
    nonisolated(unsafe) private static var table: UnsafeMutablePointer<WireTLS?> = .allocate(capacity: 0)
    nonisolated(unsafe) private static var slots = 0

    /// Turns TLS on for every connection from now on (call once, before any thread starts).
    static func enableTLS() throws(BenchFailure) {
        guard let ctx = SSL_CTX_new(TLS_client_method()) else { throw BenchFailure("OpenSSL: no client context") }
        SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, nil)
        context = ctx
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        slots = Int(min(limit.rlim_cur, 4_194_304))
        table = .allocate(capacity: slots)
        table.initialize(repeating: nil, count: slots)
        tls = true
    }

    /// A non-blocking TCP connection in progress (wait for writable), or -errno.
    static func connect(_ host: String, _ port: Int) -> Int32 {
        let fd = sc_connect_nb(host, Int32(port))
        if tls, fd >= 0 {
            guard Int(fd) < slots, let context, let state = WireTLS(context: context) else {
                sc_close_rst(fd)
                return -EMFILE
            }
            table[Int(fd)] = state
        }
        return fd
    }

    /// Like send(2) with MSG_DONTWAIT: bytes taken, or -1 with errno. Over TLS, all of the
    /// plaintext is taken at once (what the socket does not take yet waits in OpenSSL's output
    /// and goes out with the next send or recv on this descriptor).
    static func send(_ fd: Int32, _ bytes: UnsafeRawPointer?, _ count: Int) -> Int {
        guard tls, let state = table[Int(fd)] else {
            return Glibc.send(fd, bytes, count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
        }
        guard state.send(fd, bytes, count) else {
            errno = ECONNRESET
            return -1
        }
        return count
    }

    /// Like recv(2): plaintext bytes, 0 at the end of the stream, or -1 with errno (EAGAIN while
    /// only TLS records that hold no data yet have arrived).
    static func recv(_ fd: Int32, _ buffer: UnsafeMutableRawPointer, _ capacity: Int) -> Int {
        guard tls, let state = table[Int(fd)] else { return Glibc.recv(fd, buffer, capacity, 0) }
        return state.recv(fd, buffer, capacity)
    }

    /// Closes gracefully and forgets the TLS state.
    static func close(_ fd: Int32) {
        if tls, fd >= 0, Int(fd) < slots { table[Int(fd)] = nil }
        _ = Glibc.close(fd)
    }

    /// Closes with a reset (no TIME_WAIT) and forgets the TLS state.
    static func closeReset(_ fd: Int32) {
        if tls, fd >= 0, Int(fd) < slots { table[Int(fd)] = nil }
        sc_close_rst(fd)
    }
}

/// One client TLS session over memory BIOs; freed with its `SSL`.
final class WireTLS {
    private let ssl: OpaquePointer
    private let input: OpaquePointer
    private let output: OpaquePointer
    private var established = false
    /// Plaintext written before the handshake finished.
    private var early: [UInt8] = []
    /// Encrypted bytes the socket did not take yet.
    private var pending: [UInt8] = []

    init?(context: OpaquePointer) {
        guard let ssl = SSL_new(context), let input = BIO_new(BIO_s_mem()), let output = BIO_new(BIO_s_mem()) else { return nil }
        self.ssl = ssl
        self.input = input
        self.output = output
        SSL_set_bio(ssl, input, output) // the SSL owns both BIOs from here
        SSL_set_connect_state(ssl)
    }

    deinit { SSL_free(ssl) }

    func send(_ fd: Int32, _ bytes: UnsafeRawPointer?, _ count: Int) -> Bool {
        if !established {
            if let bytes { early += UnsafeRawBufferPointer(start: bytes, count: count) }
            return step(fd)
        }
        if count > 0, SSL_write(ssl, bytes, Int32(count)) <= 0 { return false }
        return flush(fd)
    }

    func recv(_ fd: Int32, _ buffer: UnsafeMutableRawPointer, _ capacity: Int) -> Int {
        // Read no more ciphertext than the plaintext buffer can hold once decrypted (plaintext
        // is never longer), leaving room for a record already half in OpenSSL.
        let room = max(1, capacity - 17_408)
        var raw = [UInt8](repeating: 0, count: min(room, 65_536))
        let n = raw.withUnsafeMutableBytes { Glibc.recv(fd, $0.baseAddress, $0.count, 0) }
        if n == 0 { return 0 }
        if n < 0 { return -1 }
        _ = raw.withUnsafeBytes { BIO_write(input, $0.baseAddress, Int32(n)) }
        if !established {
            guard step(fd) else { errno = ECONNRESET; return -1 }
            if !established { errno = EAGAIN; return -1 }
        }
        var got = 0
        while got < capacity {
            let r = SSL_read(ssl, buffer + got, Int32(min(capacity - got, Int(Int32.max))))
            if r > 0 { got += Int(r); continue }
            let e = SSL_get_error(ssl, r)
            if e == SSL_ERROR_WANT_READ { break }
            if got > 0 { break }
            if e == SSL_ERROR_ZERO_RETURN { return 0 }
            errno = ECONNRESET
            return -1
        }
        _ = flush(fd) // TLS 1.3 may answer (key updates)
        if got == 0 { errno = EAGAIN; return -1 }
        return got
    }

    /// Drives the handshake; once it is done, writes what was sent before it. False on failure.
    private func step(_ fd: Int32) -> Bool {
        let r = SSL_do_handshake(ssl)
        if r == 1 {
            established = true
            if !early.isEmpty {
                let bytes = early
                early = []
                if bytes.withUnsafeBytes({ SSL_write(ssl, $0.baseAddress, Int32($0.count)) }) <= 0 { return false }
            }
        } else {
            let e = SSL_get_error(ssl, r)
            if e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE { return false }
        }
        return flush(fd)
    }

    /// Moves OpenSSL's output to the socket, keeping what it does not take.
    private func flush(_ fd: Int32) -> Bool {
        var chunk = [UInt8](repeating: 0, count: 16_384)
        while BIO_ctrl_pending(output) > 0 {
            let n = chunk.withUnsafeMutableBytes { BIO_read(output, $0.baseAddress, Int32($0.count)) }
            if n <= 0 { break }
            pending += chunk[0..<Int(n)]
        }
        while !pending.isEmpty {
            let n = pending.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
            if n > 0 { pending.removeFirst(n); continue }
            if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) { return true }
            return false
        }
        return true
    }
}
