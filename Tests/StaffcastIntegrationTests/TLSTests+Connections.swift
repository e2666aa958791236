import Foundation
import StaffcastClient
import StaffcastCore
@testable import StaffcastPostgres
import StaffcastServer
import XCTest

/// TLS connections served in the service loop (`ServiceLoop+TLS`): whole answers before a
/// close, a wss reader that stops reading reset within `write_stall_timeout`, half-open
/// handshakes closed at `header_timeout` and their memory given back. Real sockets, OpenSSL on both ends (curl, python's
/// ssl, staffcast's own client).
extension TLSTests {
    /// Restarts the test server on TLS with short deadlines.
    func restart(headerTimeout: Double = 10, writeStallTimeout: Double = 15) throws {
        try restartOnTLS { c in
            c.headerTimeout = headerTimeout
            c.writeStallTimeout = writeStallTimeout
        }
    }

    /// Python for the stalled readers: `tiny_window_tls` opens a TLS connection with a 4 KB
    /// receive window; `watch_tcp_state` then waits (60 s at most), never reading, for the server
    /// to reset it or close it, and prints RESET or FIN (OPEN at the end) with `report()`.
    static let stalledReaderPython = """
        import socket, ssl, sys, time
        def tiny_window_tls(port, ca):
            raw = socket.socket()
            raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            raw.connect(("127.0.0.1", port))
            return ssl.create_default_context(cafile=ca).wrap_socket(raw, server_hostname="127.0.0.1")
        def watch_tcp_state(s, started, report):
            # TCP_INFO's state: 7 = CLOSE (reset), 8 = CLOSE_WAIT (FIN)
            while time.time() - started < 60:
                state = s.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 8)[0]
                if state in (7, 8):
                    print("RESET" if state == 7 else "FIN", report(), flush=True)
                    sys.exit(0)
                time.sleep(0.05)  # polls the socket's state: no event says when it changes
            print("OPEN", report(), flush=True)

        """

    func curl(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let outcome = try ProcessRunner.run("/usr/bin/env", ["curl", "-sS", "--max-time", "20", "--cacert", certificates.ca] + arguments)
        return (outcome.status, outcome.output)
    }

    func testWholeAnswersWithConnectionCloseAndHTTP10() throws {
        // ~200 KB: a history of fifty 4 KB messages; ~10 KB: the console's largest script.
        for i in 0..<50 {
            _ = try fixture.store.send(as: fixture.owner, SendRequest(eventID: fixture.event,
                                                                       message: "\(i) " + String(repeating: "x", count: 4_000)))
        }
        let history = "\(messagesPath)?limit=50"
        let auth = ["-H", "Authorization: Bearer \(fixture.ownerToken)"]
        for (path, least) in [("/console/console-messages.js", 10_000), (history, 200_000)] {
            // What a keep-alive request gets (that path always worked).
            let whole = try curl(auth + ["-o", "/dev/null", "-w", "%{http_code} %{size_download}", "\(https)\(path)"])
            XCTAssertEqual(whole.status, 0, whole.output)
            let parts = whole.output.split(separator: " ")
            XCTAssertEqual(parts.first, "200", whole.output)
            let size = Int(parts.last ?? "") ?? 0
            XCTAssertGreaterThanOrEqual(size, least, "\(path): \(whole.output)")
            for variant in [["-H", "Connection: close"], ["--http1.0"]] {
                let r = try curl(auth + variant + ["-o", "/dev/null", "-w", "%{http_code} %{size_download}", "\(https)\(path)"])
                XCTAssertEqual(r.status, 0, "\(variant) \(path): \(r.output)") // curl exits 18 on a cut body
                XCTAssertEqual(r.output, "200 \(size)", "\(variant) \(path)")
            }
        }
        // python's urllib (always Connection: close): IncompleteRead on a cut body.
        let script = """
        import ssl, sys, urllib.request
        ctx = ssl.create_default_context(cafile=sys.argv[1])
        for path, token in (("/console/console-messages.js", None), (sys.argv[3], sys.argv[4]), ("/metrics", "ops-secret")):
            req = urllib.request.Request(sys.argv[2] + path)
            if token: req.add_header("Authorization", "Bearer " + token)
            with urllib.request.urlopen(req, context=ctx, timeout=20) as r:
                body = r.read()
                print(path.split("?")[0], r.status, len(body), r.headers["Content-Length"])
        """
        let python = try ProcessRunner.run("/usr/bin/env", ["python3", "-c", script, certificates.ca, https, history, fixture.ownerToken])
        XCTAssertEqual(python.status, 0, python.output)
        let lines = python.output.split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
        XCTAssertEqual(lines.count, 3, python.output)
        for line in lines where line.count == 4 {
            XCTAssertEqual(line[1], "200", python.output)
            XCTAssertEqual(line[2], line[3], "\(line[0]): body and Content-Length differ")
        }
        // staffcast's own client sends Connection: close too.
        let listed = try api(fixture.ownerToken).raw("GET", messagesPath, query: ["limit": "50"])
        XCTAssertEqual(listed.status, 200)
        XCTAssertGreaterThanOrEqual(listed.body.count, 200_000)
        XCTAssertNotNil(try JSONSerialization.jsonObject(with: listed.body) as? [String: Any])
    }

    func testAWSSReaderThatStopsReadingIsResetWithinTheWriteStallTimeout() throws {
        let stall = 3.0
        try restart(writeStallTimeout: stall)
        // A wss client with a tiny receive window that subscribes, then never reads again and
        // watches its TCP state (TCP_INFO) without reading: 7 = CLOSE (reset), 8 = CLOSE_WAIT (FIN).
        let script = Self.stalledReaderPython + """
        import base64, json, os, struct
        port, ca, token, event = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
        s = tiny_window_tls(port, ca)
        key = base64.b64encode(os.urandom(16)).decode()
        s.sendall(("GET /v1/ws HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\nUpgrade: websocket\\r\\nConnection: Upgrade\\r\\n"
                   "Sec-WebSocket-Key: %s\\r\\nSec-WebSocket-Version: 13\\r\\nSec-WebSocket-Protocol: staffcast.v1\\r\\n"
                   "Authorization: Bearer %s\\r\\n\\r\\n" % (key, token)).encode())
        buf = b""
        while b"\\r\\n\\r\\n" not in buf: buf += s.recv(4096)
        assert b" 101 " in buf.split(b"\\r\\n")[0], buf
        p = json.dumps({"op": "subscribe", "event_id": event, "ref": "sub"}).encode()
        mask = os.urandom(4)
        s.sendall(bytes([0x81, 0x80 | len(p)]) + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(p)))
        while b'"subscribed"' not in buf: buf += s.recv(4096)
        print("READY", flush=True)
        watch_tcp_state(s, time.time(), time.time)
        """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script, "\(server.port)", certificates.ca, fixture.staffToken,
                             fixture.event.uuidString.lowercased()]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = out
        try process.run()
        defer { if process.isRunning { process.terminate() } }
        let lines = LineReader(out.fileHandleForReading)
        let ready = lines.next(deadline: Date().addingTimeInterval(20))
        XCTAssertEqual(ready, "READY")
        guard ready == "READY" else { return }
        // ~160 KB of live messages: far more than the client's window, so they stick in the
        // server's TCP socket and stop moving.
        for i in 0..<40 {
            _ = try fixture.store.send(as: fixture.owner, SendRequest(eventID: fixture.event,
                                                                       message: "\(i) " + String(repeating: "y", count: 4_000)))
        }
        let floodEnd = Date().timeIntervalSince1970
        guard let verdict = lines.next(deadline: Date().addingTimeInterval(60)) else { return XCTFail("the client said nothing") }
        let parts = verdict.split(separator: " ")
        XCTAssertEqual(parts.first, "RESET", "expected a TCP reset, got: \(verdict)")
        let at = Double(parts.last ?? "") ?? .infinity
        // The stall deadline, a tick, the change feed's delivery, and slack for a loaded machine
        // (with the socket-pair relay this once was: a FIN after a 10 s close grace on top of the deadline).
        XCTAssertLessThan(at - floodEnd, stall + 6, "reset \(at - floodEnd) s after the messages were sent")
    }

    func testAnHTTPSReaderThatStopsReadingIsResetWithinTheWriteStallTimeout() throws {
        let stall = 3.0
        try restart(writeStallTimeout: stall)
        for i in 0..<50 {
            _ = try fixture.store.send(as: fixture.owner, SendRequest(eventID: fixture.event,
                                                                       message: "\(i) " + String(repeating: "z", count: 4_000)))
        }
        // Asks for ~200 KB with a 4 KB window and never reads it.
        let script = Self.stalledReaderPython + """
        port, ca, token, path = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
        s = tiny_window_tls(port, ca)
        s.sendall(("GET %s HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\nAuthorization: Bearer %s\\r\\n\\r\\n" % (path, token)).encode())
        sent = time.time()
        watch_tcp_state(s, sent, lambda: time.time() - sent)
        """
        let r = try ProcessRunner.run("/usr/bin/env", ["python3", "-c", script, "\(server.port)", certificates.ca, fixture.ownerToken,
                                                       "\(messagesPath)?limit=50"])
        let parts = r.output.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: " ")
        XCTAssertEqual(parts.first, "RESET", "expected a TCP reset, got: \(r.output)")
        XCTAssertLessThan(Double(parts.last ?? "") ?? .infinity, stall + 5, r.output)
    }

    func testHalfOpenHandshakesAreClosedAtTheHeaderTimeout() throws {
        let headerTimeout = 2.0
        try restart(headerTimeout: headerTimeout)
        let before = Self.residentKiB()
        // 500 TCP connections: half say nothing, half send the start of a ClientHello (a TLS
        // record header promising 200 bytes, and two of them).
        var sockets: [RawSocket] = []
        for i in 0..<500 {
            let socket = try RawSocket(port: server.port)
            if i % 2 == 1 { try socket.send([0x16, 0x03, 0x01, 0x00, 0xC8, 0x01, 0x00]) }
            sockets.append(socket)
        }
        let opened = Date()
        // Closed by the server at its handshake deadline (libwebsockets' own would be 10 s).
        let deadline = opened.addingTimeInterval(headerTimeout + 5)
        for (i, socket) in sockets.enumerated() {
            XCTAssertNotEqual(socket.waitForClose(deadline: deadline).outcome, .open, "connection \(i) still open")
        }
        // And the server holds none of them any more: only the status request's own connection.
        let status = try api("ops-secret")
        var held = -1
        try waitUntil(10) {
            let r = try status.raw("GET", "/v1/status")
            XCTAssertEqual(r.status, 200)
            let loops = (try JSONSerialization.jsonObject(with: r.body) as? [String: Any])?["loops"] as? [[String: Any]] ?? []
            held = loops.compactMap { $0["http_connections"] as? Int }.reduce(0, +)
            return held <= 1
        }
        XCTAssertEqual(held, 1, "HTTP connections still held by the server")
        // Their memory is given back (the server runs in this process): 500 handshakes took
        // ~20 MB, which the allocator kept for good before the server trimmed after a wave.
        var resident = Self.residentKiB()
        waitUntil(15, poll: 0.2) {
            resident = Self.residentKiB()
            return resident <= before + 8_192
        }
        XCTAssertLessThanOrEqual(resident, before + 8_192, "resident memory \(before) KiB before, \(resident) KiB after")
        // It still serves.
        XCTAssertEqual(try api(nil).raw("GET", "/healthz").status, 200)
    }
}

/// Lines from a child's output, with a deadline per line.
final class LineReader: @unchecked Sendable {
    private let lock = NSCondition()
    private var lines: [String] = []
    private var partial = ""

    init(_ handle: FileHandle) {
        handle.readabilityHandler = { [weak self] h in
            let data = h.availableData
            guard let self else { return }
            self.lock.lock()
            defer { self.lock.unlock() }
            if data.isEmpty {
                h.readabilityHandler = nil
            } else {
                self.partial += String(decoding: data, as: UTF8.self)
                while let nl = self.partial.firstIndex(of: "\n") {
                    self.lines.append(String(self.partial[..<nl]))
                    self.partial = String(self.partial[self.partial.index(after: nl)...])
                }
            }
            self.lock.broadcast()
        }
    }

    func next(deadline: Date) -> String? {
        lock.lock()
        defer { lock.unlock() }
        while lines.isEmpty {
            if !lock.wait(until: deadline) { return lines.isEmpty ? nil : lines.removeFirst() }
        }
        return lines.removeFirst()
    }
}
