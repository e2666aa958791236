import Foundation
import StaffcastClient
import StaffcastCore
@testable import StaffcastPostgres
import StaffcastServer
import XCTest

/// wss served on the TLS connection itself (`ServiceLoop+FramedWebSockets`, `WebSocketFrameReader`): the
/// same protocol as ws — live fan-out, heartbeats both ways, 4401, graceful close, RFC 6455's
/// rules with their close codes — and one descriptor per connection (no socket pairs).
extension TLSTests {
    func connectWSS(_ token: String) throws -> TestSocket {
        let socket = TestSocket(try WebSocketClient(url: wss, headers: ["Authorization": "Bearer \(token)"], trust: trust))
        _ = try socket.expect("hello")
        return socket
    }

    /// A subscribe in the URL over wss: `hello` and `subscribed` come without a client frame.
    func testWSSSubscribeInTheURL() throws {
        let url = wss + "?subscribe=\(fixture.event.uuidString.lowercased())&ref=u"
        let socket = TestSocket(try WebSocketClient(url: url, headers: ["Authorization": "Bearer \(fixture.staffToken)"], trust: trust))
        guard case .hello = try socket.next() else { return XCTFail("hello comes first") }
        guard case .subscribed(let ref, let event, _, _, _) = try socket.next() else { return XCTFail("subscribed follows hello") }
        XCTAssertEqual(ref, "u")
        XCTAssertEqual(event.id, fixture.event)
        let live = try api(fixture.ownerToken).sendMessage(event: fixture.event, message: "over wss", type: nil, priority: nil,
                                                           expiresInMinutes: nil)
        XCTAssertEqual(try socket.expect("message").message?.id, live.id)
    }

    func testWSSSubscribeLiveFanOutRequestsAndAClientClose() throws {
        let a = try connectWSS(fixture.staffToken)
        let b = try connectWSS(fixture.adminToken)
        _ = try a.subscribe(fixture.event)
        _ = try b.subscribe(fixture.event)
        // Live fan-out to both, in order.
        var sent: [UUID] = []
        for i in 0..<5 {
            sent.append(try api(fixture.ownerToken).sendMessage(event: fixture.event, message: "wss \(i)", type: nil, priority: nil,
                                                                expiresInMinutes: nil).id)
        }
        for socket in [a, b] {
            var got: [UUID] = []
            while got.count < sent.count {
                guard case .message(let m) = try socket.expect("message") else { return XCTFail("no message") }
                got.append(m.id)
            }
            XCTAssertEqual(got, sent)
        }
        // Requests on the socket: a send acknowledged, the application-level ping answered, a
        // message larger than 64 KiB refused with too_large while the connection stays.
        try b.send(["op": "send", "ref": "s1", "event_id": fixture.event.uuidString.lowercased(), "message": "from wss"])
        _ = try b.expect("sent")
        guard case .message(let live) = try a.expect("message") else { return XCTFail("no live message") }
        XCTAssertEqual(live.message, "from wss")
        try a.sendText(String(repeating: "z", count: 70_000))
        guard case .error(_, let tooLarge) = try a.expect("error") else { return XCTFail("no error frame") }
        XCTAssertEqual(tooLarge.code, .tooLarge)
        try a.send(["op": "ping", "ref": "p"])
        _ = try a.expect("pong")
        // A fragmented frame is assembled.
        try a.client.sendFrame(opcode: 0x1, payload: Array(#"{"op":"pi"#.utf8), fin: false)
        try a.client.sendFrame(opcode: 0x0, payload: Array(#"ng","ref":"f"}"#.utf8))
        _ = try a.expect("pong")
        // The client closes: the server answers and lets go; the other socket is untouched.
        a.client.close()
        try b.send(["op": "ping"])
        _ = try b.expect("pong")
        XCTAssertTrue(waitUntil(10) { self.openConnections() == 1 }, "the closed wss connection was not released")
    }

    func testWSSHeartbeatsKeepAnAnsweringClientAndCloseASilentOne() throws {
        try restartOnTLS { $0.heartbeatInterval = 1 }
        let answering = try connectWSS(fixture.staffToken)
        // A silent client (python's ssl: it writes nothing after its first ping and reads
        // nothing for 5 s, then reads everything without answering).
        let silentOutput = SilentOutput()
        let (port, ca, token) = (server.port, certificates.ca, fixture.adminToken)
        let silent = Thread { silentOutput.set((try? Self.rawWSS("silent", port: port, ca: ca, token: token)) ?? "failed") }
        silent.start()
        // `answering` reads (its client answers each ping with a pong) for 6 s: well past the
        // heartbeat's limit of two intervals without an answer.
        let until = Date().addingTimeInterval(6)
        while Date() < until { _ = try answering.nextOrNil(timeout: until.timeIntervalSinceNow) }
        try answering.send(["op": "ping"])
        _ = try answering.expect("pong")
        // `silent` got the server's pings, left them unanswered, and was closed with 1001.
        XCTAssertTrue(waitUntil(30) { !silentOutput.get().isEmpty })
        let output = silentOutput.get()
        XCTAssertTrue(output.contains("close 1001"), output)
        let pings = output.split(separator: "\n").first { $0.hasPrefix("pings ") }.flatMap { Int($0.dropFirst(6)) } ?? 0
        XCTAssertGreaterThanOrEqual(pings, 1, output)
    }

    func testARevokedTokensWSSConnectionIsClosedWith4401() throws {
        let token = try fixture.store.issueToken(user: fixture.staff, label: "wss tablet", expiresIn: 3_600)
        let socket = try connectWSS(token)
        _ = try socket.subscribe(fixture.event)
        _ = try fixture.store.revokeToken(token)
        var code: UInt16?
        let deadline = Date().addingTimeInterval(10)
        do {
            while Date() < deadline { _ = try socket.nextOrNil(timeout: max(0.01, deadline.timeIntervalSinceNow)) }
        } catch ClientError.closed(let c, _) {
            code = c
        }
        XCTAssertEqual(code, 4401)
    }

    /// Runs `frames.py`-style checks with python's ssl: raw frames a library client would not
    /// send. Prints one line per check.
    func rawWSS(_ mode: String) throws -> String {
        try Self.rawWSS(mode, port: server.port, ca: certificates.ca, token: fixture.staffToken)
    }

    static func rawWSS(_ mode: String, port: Int, ca: String, token: String) throws -> String {
        let script = """
        import base64, json, os, socket, ssl, struct, sys
        port, ca, token, mode = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
        raw = socket.create_connection(("127.0.0.1", port), timeout=10)
        s = ssl.create_default_context(cafile=ca).wrap_socket(raw, server_hostname="127.0.0.1")
        def frame(op, payload, masked=True, fin=True):
            head = bytes([(0x80 if fin else 0) | op, (0x80 if masked else 0) | len(payload)])
            if not masked: return head + payload
            m = os.urandom(4)
            return head + m + bytes(b ^ m[i % 4] for i, b in enumerate(payload))
        buf = b""
        def read_frame():
            global buf
            while True:
                if len(buf) >= 2:
                    n = buf[1] & 0x7F; h = 2
                    if n == 126: n = struct.unpack(">H", buf[2:4])[0]; h = 4
                    elif n == 127: n = struct.unpack(">Q", buf[2:10])[0]; h = 10
                    if len(buf) >= h + n:
                        f = (buf[0] & 0x0F, buf[h:h + n]); buf = buf[h + n:]; return f
                chunk = s.recv(65536)
                if not chunk: return None
                buf += chunk
        key = base64.b64encode(os.urandom(16)).decode()
        request = ("GET /v1/ws HTTP/1.1\\r\\nHost: x\\r\\nUpgrade: websocket\\r\\nConnection: Upgrade\\r\\n"
                   "Sec-WebSocket-Key: %s\\r\\nSec-WebSocket-Version: 13\\r\\nAuthorization: Bearer %s\\r\\n\\r\\n" % (key, token)).encode()
        # The first frame rides in the same write as the upgrade request.
        s.sendall(request + frame(0x9, b"first"))
        while b"\\r\\n\\r\\n" not in buf: buf += s.recv(4096)
        head, buf = buf.split(b"\\r\\n\\r\\n", 1)
        assert b" 101 " in head.split(b"\\r\\n")[0], head
        print("accept-ok" if base64.b64encode(__import__("hashlib").sha1((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").encode()).digest()) in head else "accept-bad")
        def until(op):
            while True:
                f = read_frame()
                if f is None: return None
                if f[0] == op: return f[1]
        print("pong", until(0xA).decode())
        def close_code():
            p = until(0x8)
            if p is None: return "eof"
            return str(struct.unpack(">H", p[:2])[0]) if len(p) >= 2 else "none"
        def eof():
            try:
                while True:
                    chunk = s.recv(65536)
                    if not chunk: return "eof"
            except (ConnectionResetError, ssl.SSLError): return "eof"
            except socket.timeout: return "open"
        if mode == "unmasked": s.sendall(frame(0x1, b'{"op":"ping"}', masked=False))
        elif mode == "utf8": s.sendall(frame(0x1, b'{"op":"\\xff"}'))
        elif mode == "control": s.sendall(frame(0x9, b"x", fin=False))
        elif mode == "opcode": s.sendall(frame(0x3, b""))
        elif mode == "close": s.sendall(frame(0x8, struct.pack(">H", 4000) + b"bye"))
        elif mode == "silent":
            __import__("time").sleep(5)  # silent for a while: the server's heartbeat pings are what is counted
            pings = 0
            while True:
                f = read_frame()
                if f is None or f[0] == 0x8: break
                if f[0] == 0x9 and f[1] == b"hb": pings += 1
            print("pings", pings)
            print("close", str(struct.unpack(">H", f[1][:2])[0]) if f else "eof")
            sys.exit(0)
        print("close", close_code(), eof())
        """
        return try ProcessRunner.run("/usr/bin/env", ["python3", "-c", script, "\(port)", ca, token, mode]).output
    }

    func testWSSFramingRulesAndTheirCloseCodes() throws {
        let cases = [("close", "close 4000 eof"), ("unmasked", "close 1002 eof"), ("utf8", "close 1007 eof"),
                     ("control", "close 1002 eof"), ("opcode", "close 1002 eof")]
        for (mode, expected) in cases {
            let output = try rawWSS(mode)
            XCTAssertTrue(output.contains("accept-ok"), "\(mode): \(output)")
            XCTAssertTrue(output.contains("pong first"), "\(mode): the server did not answer the client's ping: \(output)")
            XCTAssertTrue(output.contains(expected), "\(mode): expected \(expected): \(output)")
        }
        // The server is fine, and every one of those connections was released.
        XCTAssertTrue(waitUntil(10) { self.openConnections() == 0 })
        _ = try connectWSS(fixture.staffToken)
    }

    func testABadWSSHandshakeIsRefusedWithAnAnswer() throws {
        // A subprotocol offer without staffcast.v1: a whole 400 with a sentence, as for a bad token
        // (the other fields' rules: WebSocketHandshakeTests).
        XCTAssertThrowsError(try WebSocketClient(url: wss, headers: ["Authorization": "Bearer \(fixture.staffToken)"],
                                                 subprotocol: "chat", trust: trust)) { error in
            guard case ClientError.handshake(let status, let body) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(status, 400)
            XCTAssertTrue("\(body)".contains("staffcast.v1"), "\(body)")
        }
    }

    func testFiftyWSSConnectionsHoldOneDescriptorEach() throws {
        try restartOnTLS { $0.maxConnectionsPerUser = 100 }
        // The server runs in this process: its descriptors and the 50 clients' are counted
        // together. Each connection is two TCP sockets here (the client's end and the server's);
        // the relay this replaced added a local socket pair (two more) per connection. Unix
        // sockets whose other end is in this process are counted as pairs: the server's own
        // connections to PostgreSQL (its workers connect at their first job, at any moment)
        // are Unix sockets too, but their other end is PostgreSQL's.
        let before = Self.descriptors()
        var sockets: [TestSocket] = []
        for _ in 0..<50 { sockets.append(try connectWSS(fixture.staffToken)) }
        XCTAssertTrue(waitUntil(10) { self.openConnections() == 50 })
        let during = Self.descriptors()
        XCTAssertLessThanOrEqual(during.total - before.total, 2 * 50 + 4, "descriptors: \(before) -> \(during)")
        XCTAssertLessThanOrEqual(during.paired - before.paired, 2, "local socket pairs appeared: \(before) -> \(during)")
        // All of them work.
        _ = try api(fixture.ownerToken).sendMessage(event: fixture.event, message: "to fifty", type: nil, priority: nil,
                                                    expiresInMinutes: nil)
        for socket in sockets { _ = try socket.subscribe(fixture.event) }
        for socket in sockets { socket.client.close() }
        sockets.removeAll()
        XCTAssertTrue(waitUntil(10) { self.openConnections() == 0 && Self.descriptors().total <= before.total + 4 },
                      "descriptors not given back: \(before) -> \(Self.descriptors())")
    }

    /// This process's open descriptors, and how many of them are Unix-domain sockets whose other
    /// end is in this process too (`ss` names each socket's peer).
    static func descriptors() -> (total: Int, paired: Int) {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        let sockets = Set(names.compactMap { name -> String? in
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(name)"),
                  target.hasPrefix("socket:[") else { return nil }
            return String(target.dropFirst(8).dropLast())
        })
        // `ss -xaH`: one Unix socket a line, ending with its inode, the peer's address and inode.
        let listed = (try? ProcessRunner.run("/usr/bin/env", ["ss", "-xaH"]).output) ?? ""
        let paired = listed.split(separator: "\n").filter { line in
            let fields = line.split(separator: " ")
            guard fields.count >= 4 else { return false }
            return sockets.contains(String(fields[fields.count - 3])) && sockets.contains(String(fields[fields.count - 1]))
        }.count
        return (names.count, paired)
    }

    /// WebSockets the server holds (`/v1/status` over https, with the ops token).
    func openConnections() -> Int? {
        guard let data = try? api("ops-secret").call("GET", "/v1/status"),
              let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { return nil }
        return object["connections"] as? Int
    }
}

/// What a client thread printed, read by the test's thread.
final class SilentOutput: @unchecked Sendable {
    private let lock = NSLock()
    private var text = ""
    func set(_ value: String) { lock.withLock { text = value } }
    func get() -> String { lock.withLock { text } }
}
