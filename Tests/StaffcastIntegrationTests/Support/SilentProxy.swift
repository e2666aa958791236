import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A proxy between staffcast and the test cluster's Unix socket that can go silent: `pause()`
/// stops forwarding in both directions (connections stay open, new ones are accepted and then
/// hear nothing), as a network that drops every packet or a frozen database host would;
/// `resume()` forwards again, bytes held meanwhile included. Only connections made through its
/// conninfo are affected, so the shared cluster serves other tests as usual.
final class SilentProxy: @unchecked Sendable {
    let directory: String
    private let upstream: String
    private let listenFD: Int32
    private let state = NSLock()
    private var paused = false
    private var stopped = false
    private var descriptors: [Int32] = []
    private let threads = DispatchGroup()

    /// Listens at `<new temp dir>/.s.PGSQL.5432` and forwards to the socket of the server
    /// that `conninfo` names (`host='DIR' port=5432`).
    init(forwardingTo conninfo: String) throws {
        guard let host = Self.hostRange(conninfo) else { throw RawSocketError("no host='…' in the conninfo \(conninfo)") }
        upstream = "\(conninfo[host].dropFirst(6).dropLast())/.s.PGSQL.5432"
        directory = "/tmp/sc-proxy-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        listenFD = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard listenFD >= 0 else { throw RawSocketError("socket(): \(String(cString: strerror(errno)))") }
        var address = try Self.address("\(directory)/.s.PGSQL.5432")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listenFD, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0, listen(listenFD, 128) == 0 else {
            Glibc.close(listenFD)
            throw RawSocketError("bind/listen at \(directory): \(String(cString: strerror(errno)))")
        }
        threads.enter()
        Thread { [self] in acceptLoop(); threads.leave() }.start()
    }

    /// The same database through this proxy.
    func conninfo(_ original: String) -> String {
        guard let host = Self.hostRange(original) else { return original }
        return original.replacingCharacters(in: host, with: "host='\(directory)'")
    }

    /// Where `host='…'` is in a conninfo (the test cluster's paths hold no quote).
    private static func hostRange(_ conninfo: String) -> Range<String.Index>? {
        guard let start = conninfo.range(of: "host='"),
              let end = conninfo[start.upperBound...].firstIndex(of: "'") else { return nil }
        return start.lowerBound..<conninfo.index(after: end)
    }

    func pause() { state.withLock { paused = true } }
    func resume() { state.withLock { paused = false } }
    private var isPaused: Bool { state.withLock { paused } }
    private var isStopped: Bool { state.withLock { stopped } }

    /// Closes every connection (clients see them end) and the listening socket.
    func stop() {
        let open: [Int32] = state.withLock {
            stopped = true
            paused = false
            return descriptors
        }
        for fd in open { shutdown(fd, Int32(SHUT_RDWR)) }
        _ = threads.wait(timeout: .now() + 5)
        Glibc.close(listenFD)
        try? FileManager.default.removeItem(atPath: directory)
    }

    private static func address(_ path: String) throws -> sockaddr_un {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { throw RawSocketError("socket path too long: \(path)") }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, b) in bytes.enumerated() { raw[i] = b }
        }
        return address
    }

    private func acceptLoop() {
        while !isStopped {
            var pfd = pollfd(fd: listenFD, events: Int16(POLLIN), revents: 0)
            guard poll(&pfd, 1, 100) == 1 else { continue }
            let client = accept(listenFD, nil, nil)
            guard client >= 0 else { continue }
            let server = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
            guard var address = try? Self.address(upstream), server >= 0 else {
                Glibc.close(client)
                continue
            }
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(server, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
            guard connected == 0 else {
                Glibc.close(client)
                Glibc.close(server)
                continue
            }
            state.withLock { descriptors += [client, server] }
            threads.enter()
            Thread { [self] in pump(client, server); threads.leave() }.start()
        }
    }

    /// Copies both ways until either side ends; while paused it reads nothing, so nothing moves.
    private func pump(_ a: Int32, _ b: Int32) {
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
                var sent = 0
                while sent < n {
                    let w = buffer.withUnsafeBytes { write(to, $0.baseAddress! + sent, n - sent) }
                    if w <= 0 { break loop }
                    sent += w
                }
            }
        }
        state.withLock { descriptors.removeAll { $0 == a || $0 == b } }
        Glibc.close(a)
        Glibc.close(b)
    }
}
