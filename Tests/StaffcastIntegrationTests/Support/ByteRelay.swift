import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The moving parts of a test relay, shared by `RecordingRelay` (TCP, keeps what clients sent)
/// and `SilentProxy` (a Unix socket in front of PostgreSQL, can go silent): it accepts on
/// `listenFD`, connects each client to the upstream that `connectUpstream` opens (-1: refused,
/// the client is closed), and copies bytes both ways on a thread per connection until either
/// side ends. While paused it reads nothing, so nothing moves; connections stay open.
final class ByteRelay: @unchecked Sendable {
    private let listenFD: Int32
    private let connectUpstream: @Sendable () -> Int32
    private let records: Bool
    private let state = NSLock()
    private var stopped = false
    private var paused = false
    private var descriptors: [Int32] = []
    /// What each connection's client sent, in the order the connections were accepted (`records`).
    private var sent: [[UInt8]] = []
    private let threads = DispatchGroup()

    /// Takes over `listenFD` (closed by `stop`) and starts accepting.
    init(listenFD: Int32, records: Bool, connectUpstream: @escaping @Sendable () -> Int32) {
        self.listenFD = listenFD
        self.records = records
        self.connectUpstream = connectUpstream
        threads.enter()
        Thread { [self] in acceptLoop(); threads.leave() }.start()
    }

    /// A listening socket of `family` bound to `address` (a `sockaddr_in` or `sockaddr_un`), which
    /// is updated to the name it got (a port picked by the kernel, say).
    static func listeningSocket<Address>(_ family: Int32, at address: inout Address, backlog: Int32) throws -> Int32 {
        let fd = socket(family, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw RawSocketError("socket(): \(String(cString: strerror(errno)))") }
        var length = socklen_t(MemoryLayout<Address>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound, listen(fd, backlog) == 0 else {
            let why = String(cString: strerror(errno))
            Glibc.close(fd)
            throw RawSocketError("bind/listen: \(why)")
        }
        return fd
    }

    /// A socket of `family` connected to `address`, or -1.
    static func connectedSocket<Address>(_ family: Int32, to address: Address) -> Int32 {
        let fd = socket(family, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return -1 }
        var address = address
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<Address>.size)) }
        }
        guard connected == 0 else {
            Glibc.close(fd)
            return -1
        }
        return fd
    }

    /// The bytes each client sent so far, a connection each, oldest first (empty unless `records`).
    var clientBytes: [[UInt8]] { state.withLock { sent } }

    func pause() { state.withLock { paused = true } }
    func resume() { state.withLock { paused = false } }
    private var isPaused: Bool { state.withLock { paused } }
    private var isStopped: Bool { state.withLock { stopped } }

    /// Ends every connection open now (both sides see it end); new ones are relayed as before.
    func dropAll() {
        let open = state.withLock { descriptors }
        for fd in open { shutdown(fd, Int32(SHUT_RDWR)) }
    }

    /// Ends every connection and stops listening.
    func stop() {
        state.withLock {
            stopped = true
            paused = false
        }
        dropAll()
        _ = threads.wait(timeout: .now() + 5)
        Glibc.close(listenFD)
    }

    private func acceptLoop() {
        while !isStopped {
            var pfd = pollfd(fd: listenFD, events: Int16(POLLIN), revents: 0)
            guard poll(&pfd, 1, 100) == 1 else { continue }
            let client = accept(listenFD, nil, nil)
            guard client >= 0 else { continue }
            let server = connectUpstream()
            guard server >= 0 else {
                Glibc.close(client)
                continue
            }
            let index: Int = state.withLock {
                descriptors += [client, server]
                sent.append([])
                return sent.count - 1
            }
            threads.enter()
            Thread { [self] in pump(client, server, connection: index); threads.leave() }.start()
        }
    }

    /// Copies both ways until either side ends, keeping what the client (`a`) sent.
    private func pump(_ a: Int32, _ b: Int32, connection index: Int) {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        loop: while !isStopped {
            if isPaused {
                usleep(20_000) // paused: hold everything back until resumed (no event to wait on)
                continue
            }
            var fds = [pollfd(fd: a, events: Int16(POLLIN), revents: 0), pollfd(fd: b, events: Int16(POLLIN), revents: 0)]
            guard poll(&fds, 2, 50) > 0 else { continue }
            for (i, pfd) in fds.enumerated() where pfd.revents != 0 {
                // A pause that began during poll still holds these bytes back.
                if isPaused { continue loop }
                let from = i == 0 ? a : b, to = i == 0 ? b : a
                let n = buffer.withUnsafeMutableBytes { read(from, $0.baseAddress, $0.count) }
                if n <= 0 { break loop }
                if i == 0, records { state.withLock { sent[index] += buffer[0..<n] } }
                var written = 0
                while written < n {
                    // MSG_NOSIGNAL: a side that has gone is an error here, not a SIGPIPE ending the tests.
                    let w = buffer.withUnsafeBytes { send(to, $0.baseAddress! + written, n - written, Int32(MSG_NOSIGNAL)) }
                    if w <= 0 { break loop }
                    written += w
                }
            }
        }
        state.withLock { descriptors.removeAll { $0 == a || $0 == b } }
        Glibc.close(a)
        Glibc.close(b)
    }
}
