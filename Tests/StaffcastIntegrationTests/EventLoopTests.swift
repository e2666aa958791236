import Foundation
import StaffcastClient
import StaffcastCore
import XCTest

/// The service loops' event loop (`event_loop`, issue 21): libev on epoll (the default) and
/// libwebsockets' own poll(). With each, a real `staffcast serve` answers HTTP and WebSockets
/// on a few hundred connections at once, delivers a message to every subscriber, gives back
/// every descriptor once the clients close, and stops gracefully on SIGTERM (1001, exit 0).
final class EventLoopTests: IntegrationTestCase {
    func testLibevLoopsServeHundredsOfConnectionsAndStopCleanly() throws {
        try serveAndStop(eventLoop: "ev")
    }

    func testPollLoopsServeHundredsOfConnectionsAndStopCleanly() throws {
        try serveAndStop(eventLoop: "poll")
    }

    func testAnUnknownEventLoopIsRefusedNamingTheChoices() throws {
        let file = try configFile("event_loop: uv\n")
        defer { try? FileManager.default.removeItem(atPath: file) }
        let refused = try CommandLineTests.execute(["serve", "--config", file, "--check-config"])
        XCTAssertEqual(refused.status, 64) // a configuration error, as a command-line error
        XCTAssertTrue(refused.stderr.contains("'event_loop' must be ev"), refused.stderr)
        XCTAssertTrue(refused.stderr.contains("uv is not offered"), refused.stderr)
        let shown = try CommandLineTests.execute(["serve", "--check-config"])
        XCTAssertEqual(shown.status, 0, shown.stderr)
        XCTAssertTrue(shown.stdout.contains("event_loop: ev"), "libev is the default: \(shown.stdout)")
    }

    static let webSockets = 300
    static let httpConnections = 100

    private func serveAndStop(eventLoop: String) throws {
        let file = try configFile("event_loop: \(eventLoop)\nservice_threads: 2\nmax_connections_per_user: 1000\n")
        defer { try? FileManager.default.removeItem(atPath: file) }
        let serve = try StaffcastProcess(["serve", "--config", file, "--listen", "127.0.0.1:0",
                                          "--database-url", TestDatabase.serverLogin(fixture.conninfo), "--log-level", "warning"])
        defer { serve.stop() }
        let pid = serve.process.processIdentifier
        let port = serve.port
        let ws = "ws://127.0.0.1:\(port)/v1/ws"
        let api = try APIClient(server: "http://127.0.0.1:\(port)", token: fixture.ownerToken)

        // Warm up everything the server opens lazily (database connections, timers), then count.
        try waitUntil("the server is ready", seconds: 30) { (try? self.status("/readyz", port: port)) == 200 }
        let first = TestSocket(try WebSocketClient(url: ws, headers: ["Authorization": "Bearer \(fixture.staffToken)"]))
        _ = try first.expect("hello")
        _ = try first.subscribe(fixture.event)
        _ = try api.sendMessage(event: fixture.event, message: "Warm-up", type: nil, priority: nil, expiresInMinutes: nil)
        _ = try first.expect("message")
        // A WebSocket `send` is handed to the group commit when the loop's turn ends (libev's
        // prepare watcher; with poll, after each lws_service): answered, and delivered.
        let sender = TestSocket(try WebSocketClient(url: ws, headers: ["Authorization": "Bearer \(fixture.ownerToken)"]))
        _ = try sender.expect("hello")
        for i in 0..<3 {
            try sender.send(["op": "send", "event_id": fixture.event.uuidString.lowercased(), "ref": "s\(i)",
                             "message": "Over the WebSocket \(i) (\(eventLoop))"])
        }
        for i in 0..<3 {
            guard case .sent(let ref, _)? = try? sender.expect("sent", timeout: 10) else { return XCTFail("no sent for s\(i)") }
            XCTAssertEqual(ref, "s\(i)")
            XCTAssertEqual(try first.expect("message").message?.message, "Over the WebSocket \(i) (\(eventLoop))")
        }
        sender.close()
        first.close()
        try waitUntil("the warm-up socket is closed", seconds: 20) { self.connectionInodes(pid, port: port).isEmpty }
        let baseline = try descriptors(pid)

        // A few hundred at once: subscribed WebSockets and keep-alive HTTP connections.
        var sockets: [TestSocket] = []
        for _ in 0..<Self.webSockets {
            let socket = TestSocket(try WebSocketClient(url: ws, headers: ["Authorization": "Bearer \(fixture.staffToken)"]))
            _ = try socket.expect("hello")
            try socket.send(["op": "subscribe", "event_id": fixture.event.uuidString.lowercased(), "ref": "sub"])
            sockets.append(socket)
        }
        for socket in sockets { _ = try socket.expect("subscribed", timeout: 30) }
        var https: [RawSocket] = []
        for _ in 0..<Self.httpConnections {
            let raw = try RawSocket(port: port)
            try raw.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            let answer = try raw.readResponse(deadline: Date().addingTimeInterval(10))
            XCTAssertEqual(answer.status, 200, answer.description)
            https.append(raw) // kept open (keep-alive)
        }
        XCTAssertGreaterThanOrEqual(try descriptors(pid).count, baseline.count + Self.webSockets + Self.httpConnections,
                                    "the server holds every connection")
        // Which connections the kernel watches in an epoll set (/proc/PID/fdinfo): every plain
        // one, HTTP and WebSocket alike, whichever loop libwebsockets runs: they stay in the
        // loop's own set from accept to close (libwebsockets' poll() would pass each of them to
        // every poll() call; it only sees TLS connections).
        let open = Set(connectionInodes(pid, port: port))
        XCTAssertEqual(open.count, Self.webSockets + Self.httpConnections)
        XCTAssertEqual(open.intersection(epollWatched(pid)).count, open.count, "epoll watches every connection (\(eventLoop))")

        let sent = try api.sendMessage(event: fixture.event, message: "Gates open", type: nil, priority: nil, expiresInMinutes: nil)
        for socket in sockets {
            XCTAssertEqual(try socket.expect("message", timeout: 30).message?.id, sent.id)
        }

        // Clients close: the server closes every connection's descriptor. (A descriptor it kept
        // would hold its socket in CLOSE_WAIT on the port.) Anything else opened since the
        // baseline is the server's own lazily opened state, not a client's: none of it is a TCP
        // socket on the port, and it is a handful (seen: libdispatch's first timer, an epoll,
        // eventfd and timerfd, and two database connections).
        sockets.forEach { $0.close() }
        https.forEach { $0.close() }
        sockets = []
        https = []
        try waitUntil("the server closed every connection", seconds: 30) { self.connectionInodes(pid, port: port).isEmpty }
        let now = try descriptors(pid)
        let added = now.filter { baseline[$0.key] != $0.value }
        let onPort = Set(connectionInodes(pid, port: port, anyState: true))
        XCTAssertTrue(added.values.allSatisfy { !onPort.contains($0.replacingOccurrences(of: "socket:[", with: "").replacingOccurrences(of: "]", with: "")) },
                      "descriptors left for connections: \(added)")
        XCTAssertLessThanOrEqual(now.count, baseline.count + 8, "descriptors beyond the baseline: \(added)")

        // SIGTERM: a subscriber gets 1001 and the process exits 0 before its deadline.
        let last = TestSocket(try WebSocketClient(url: ws, headers: ["Authorization": "Bearer \(fixture.staffToken)"]))
        _ = try last.expect("hello")
        _ = try last.subscribe(fixture.event)
        serve.process.terminate()
        XCTAssertEqual(try last.closeCode(idle: 20), 1001)
        XCTAssertEqual(serve.wait(seconds: 20), 0, "graceful stop exits 0: \(serve.stderr)")
        XCTAssertFalse(serve.stderr.contains("libwebsockets did not finish"), serve.stderr)
    }

    // MARK: helpers

    private func configFile(_ text: String) throws -> String {
        let file = NSTemporaryDirectory() + "sc-eventloop-\(UUID().uuidString.prefix(8)).yaml"
        try text.write(toFile: file, atomically: true, encoding: .utf8)
        return file
    }

    private func waitUntil(_ what: String, seconds: TimeInterval, _ condition: () -> Bool) throws {
        guard StaffcastIntegrationTests.waitUntil(seconds, poll: 0.05, condition) else {
            throw CommandFailureForTests("timed out waiting until \(what)")
        }
    }

    /// The status of `GET path` on a fresh connection.
    private func status(_ path: String, port: Int) throws -> Int {
        let raw = try RawSocket(port: port)
        defer { raw.close() }
        try raw.send(RawSocket.request("GET", path, port: port, headers: [("Connection", "close")]))
        return try raw.readResponse(deadline: Date().addingTimeInterval(5)).status
    }

    /// Open descriptors of process `pid`: number → what it is (`socket:[inode]`, a path, …).
    private func descriptors(_ pid: Int32) throws -> [String: String] {
        var all: [String: String] = [:]
        for fd in try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd") {
            all[fd] = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\(fd)")) ?? "?"
        }
        return all
    }

    /// Socket inodes of the server's side of TCP connections on `port` (/proc/PID/net/tcp):
    /// established or closing (CLOSE_WAIT: the client closed, the server has not), or in any
    /// state but listening with `anyState`.
    private func connectionInodes(_ pid: Int32, port: Int, anyState: Bool = false) -> [String] {
        var hex = String(port, radix: 16, uppercase: true)
        while hex.count < 4 { hex = "0" + hex }
        let hexPort = ":" + hex
        // Read to the end (a proc file has no size; the table is longer than one read).
        let table = FileHandle(forReadingAtPath: "/proc/\(pid)/net/tcp").map { handle in
            defer { try? handle.close() }
            return String(decoding: handle.readDataToEndOfFile(), as: UTF8.self)
        } ?? ""
        return table.split(separator: "\n").dropFirst().compactMap { line in
            let f = line.split(separator: " ", omittingEmptySubsequences: true)
            // sl, local address, remote address, state, queues, timer, retransmits, uid, timeout, inode
            guard f.count > 9, f[1].hasSuffix(hexPort), f[3] != "0A" else { return nil }
            guard anyState || f[3] == "01" || f[3] == "08" else { return nil }
            return String(f[9])
        }
    }

    /// Inodes of the sockets that any of `pid`'s epoll sets watches.
    private func epollWatched(_ pid: Int32) -> Set<String> {
        let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []
        var targets: Set<Int> = []
        for fd in fds {
            guard let link = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\(fd)"),
                  link == "anon_inode:[eventpoll]",
                  let info = try? String(contentsOfFile: "/proc/\(pid)/fdinfo/\(fd)", encoding: .utf8) else { continue }
            for line in info.split(separator: "\n") where line.hasPrefix("tfd:") {
                if let n = line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first.flatMap({ Int($0) }) {
                    targets.insert(n)
                }
            }
        }
        var inodes: Set<String> = []
        for fd in targets {
            guard let link = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\(fd)"),
                  link.hasPrefix("socket:[") else { continue }
            inodes.insert(String(link.dropFirst("socket:[".count).dropLast()))
        }
        return inodes
    }
}
