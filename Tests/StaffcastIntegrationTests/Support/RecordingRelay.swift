import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A TCP relay on 127.0.0.1 in front of a test's server that keeps what each client sent, so a
/// test sees a real client's upgrade request and frames as they went over the wire (no client
/// is changed or mocked). `dropAll()` ends the connections open now, as a lost network would;
/// new ones are relayed as before.
final class RecordingRelay: @unchecked Sendable {
    let port: Int
    private let upstreamPort: Int
    private let listenFD: Int32
    private let state = NSLock()
    private var stopped = false
    private var descriptors: [Int32] = []
    /// What each connection's client sent, in the order the connections were accepted.
    private var sent: [[UInt8]] = []
    private let threads = DispatchGroup()

    /// Listens on a free port of 127.0.0.1 and relays to 127.0.0.1:`upstreamPort`.
    init(to upstreamPort: Int) throws {
        self.upstreamPort = upstreamPort
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw RawSocketError("socket(): \(String(cString: strerror(errno)))") }
        var address = Self.loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard bound == 0, named == 0, listen(fd, 16) == 0 else {
            Glibc.close(fd)
            throw RawSocketError("bind/listen on 127.0.0.1: \(String(cString: strerror(errno)))")
        }
        listenFD = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        threads.enter()
        Thread { [self] in acceptLoop(); threads.leave() }.start()
    }

    /// The bytes each client sent so far, a connection each, oldest first.
    var clientBytes: [[UInt8]] { state.withLock { sent } }

    /// Ends every connection open now (both sides see it end).
    func dropAll() {
        let open = state.withLock { descriptors }
        for fd in open { shutdown(fd, Int32(SHUT_RDWR)) }
    }

    /// Ends every connection and stops listening.
    func stop() {
        state.withLock { stopped = true }
        dropAll()
        _ = threads.wait(timeout: .now() + 5)
        Glibc.close(listenFD)
    }

    private var isStopped: Bool { state.withLock { stopped } }

    private static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(port.bigEndian)
        address.sin_addr.s_addr = in_addr_t(UInt32(0x7F00_0001).bigEndian)
        return address
    }

    private func acceptLoop() {
        while !isStopped {
            var pfd = pollfd(fd: listenFD, events: Int16(POLLIN), revents: 0)
            guard poll(&pfd, 1, 100) == 1 else { continue }
            let client = accept(listenFD, nil, nil)
            guard client >= 0 else { continue }
            let server = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = Self.loopback(port: UInt16(upstreamPort))
            let connected = server >= 0 && withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(server, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            } == 0
            guard connected else {
                Glibc.close(client)
                if server >= 0 { Glibc.close(server) }
                continue
            }
            let index: Int = state.withLock {
                descriptors += [client, server]
                sent.append([])
                return sent.count - 1
            }
            threads.enter()
            Thread { [self] in pump(client, server, recording: index); threads.leave() }.start()
        }
    }

    /// Copies both ways until either side ends, keeping what the client (`a`) sent.
    private func pump(_ a: Int32, _ b: Int32, recording index: Int) {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        loop: while !isStopped {
            var fds = [pollfd(fd: a, events: Int16(POLLIN), revents: 0), pollfd(fd: b, events: Int16(POLLIN), revents: 0)]
            guard poll(&fds, 2, 50) > 0 else { continue }
            for (i, pfd) in fds.enumerated() where pfd.revents != 0 {
                let from = i == 0 ? a : b, to = i == 0 ? b : a
                let n = buffer.withUnsafeMutableBytes { read(from, $0.baseAddress, $0.count) }
                if n <= 0 { break loop }
                if i == 0 { state.withLock { sent[index] += buffer[0..<n] } }
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
