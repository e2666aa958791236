import Foundation
import StaffcastClient
import StaffcastCore
import StaffcastPostgres
import StaffcastServer
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// The WebSocket upgrade: connection caps per user and per server, a complete 401 before the
/// upgrade for a bad token, and an upgrade carrying kilobytes of cookies.
final class UpgradeTransportTests: TransportTestCase {
    // MARK: 5. connection caps

    /// The raw answer to a WebSocket upgrade (the socket is closed afterwards).
    func upgradeResponse(_ server: TestServer, token: String?, file: StaticString = #filePath, line: UInt = #line)
        throws -> RawHTTPResponse {
        let socket = try RawSocket(port: server.port)
        defer { socket.close() }
        return try socket.upgrade(token: token)
    }

    /// Connects (reading `hello`), retrying for `seconds` while the server answers 429 or 503.
    func connectEventually(_ server: TestServer, _ token: String, within seconds: TimeInterval = 5,
                           file: StaticString = #filePath, line: UInt = #line) throws -> TestSocket {
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            do {
                return try server.connect(token, file: file, line: line)
            } catch ClientError.handshake(let status, let body) where status == 429 || status == 503 {
                guard Date() < deadline else {
                    XCTFail("still refused with \(status) after \(seconds) s: \(body)", file: file, line: line)
                    throw ClientError.handshake(status: status, body: body)
                }
                usleep(200_000) // refused while the server lets go of a connection: ask again shortly
            }
        }
    }

    func testConnectionCapsPerUserAndPerServer() throws {
        let server = try startServer {
            $0.maxConnectionsPerUser = 3
            $0.maxConnections = 5
        }
        var staff = try (0..<3).map { _ in try server.connect(fixture.staffToken) }

        let fourth = try upgradeResponse(server, token: fixture.staffToken)
        XCTAssertEqual(fourth.status, 429, "a 4th WebSocket of one user: \(fourth)")
        if let code = fourth.errorCode { XCTAssertEqual(code, "rate_limited", "\(fourth)") }

        // Other users still connect, up to the server's cap.
        var admin: TestSocket? = try server.connect(fixture.adminToken)
        let owner = try server.connect(fixture.ownerToken)
        let sixth = try upgradeResponse(server, token: fixture.outsiderToken)
        XCTAssertEqual(sixth.status, 503, "a 6th WebSocket on a server capped at 5: \(sixth)")
        if let code = sixth.errorCode { XCTAssertEqual(code, "unavailable", "\(sixth)") }
        waitUntil(5) { connectionCount(server) == 5 }
        XCTAssertEqual(connectionCount(server), 5, "refused upgrades are not counted")

        // One closes: another user gets in again, and the server is full again.
        staff.removeFirst().close()
        let outsider = try connectEventually(server, fixture.outsiderToken)
        let full = try upgradeResponse(server, token: fixture.staffToken)
        XCTAssertEqual(full.status, 503, "the server is full again: \(full)")

        // Another closes: the same user gets their third connection back.
        admin?.close()
        admin = nil
        staff.append(try connectEventually(server, fixture.staffToken))
        waitUntil(5) { connectionCount(server) == 5 }
        XCTAssertEqual(connectionCount(server), 5)
        for socket in staff + [owner, outsider] {
            try socket.send(["op": "ping", "ref": "cap"])
            XCTAssertEqual(try socket.expect("pong").ref, "cap")
        }
    }

    // MARK: 6. the 401 before the upgrade

    func testABadTokenGetsACompleteHTTP401BeforeTheUpgradeAndThenEOF() throws {
        let server = try startServer()
        let wrong = Self.wellFormedWrongToken()
        let cases: [(name: String, path: String, token: String?)] = [
            ("a wrong bearer token", "/v1/ws", wrong),
            ("no token", "/v1/ws", nil),
            ("a wrong ?access_token", "/v1/ws?access_token=\(wrong)", nil),
        ]
        for c in cases {
            for attempt in 1...3 {
                let context = "\(c.name), attempt \(attempt)"
                let socket = try RawSocket(port: server.port)
                let r: RawHTTPResponse
                do {
                    r = try socket.upgrade(path: c.path, token: c.token)
                } catch {
                    XCTFail("\(context): no complete response: \(error)")
                    continue
                }
                XCTAssertEqual(r.statusLine, "HTTP/1.1 401 Unauthorized", "\(context): \(r)")
                XCTAssertNil(r.header("transfer-encoding"), "\(context): \(r)")
                XCTAssertEqual(r.header("content-length").flatMap { Int($0) }, r.body.count, "\(context): \(r)")
                XCTAssertNil(r.header("sec-websocket-accept"), "\(context): \(r)")
                XCTAssertEqual(r.errorCode, "unauthorized", "\(context): \(r)")
                let message = (r.json?["error"] as? [String: Any])?["message"] as? String
                XCTAssertFalse((message ?? "").isEmpty, "\(context): the error has a sentence: \(r)")
                let (outcome, extra) = socket.waitForClose(deadline: Date().addingTimeInterval(5))
                XCTAssertEqual(outcome, .eof, "\(context): the server closes the connection after the 401")
                XCTAssertEqual(extra, 0, "\(context): nothing after the 401's body")
            }
        }
        // A third-party client sees the 401 too (python's `websockets`, which make test installs).
        XCTAssertEqual(Self.python(["-c", "import websockets.sync.client"])?.status, 0,
                       "python3 cannot import websockets.sync.client: run scripts/install-deps.sh (pip install websockets)")
        do {
            let script = """
                import sys
                from websockets.sync.client import connect
                try:
                    with connect(sys.argv[1], additional_headers={"Authorization": "Bearer " + sys.argv[2]},
                                 subprotocols=["staffcast.v1"], open_timeout=10) as ws:
                        print("CONNECTED")
                except Exception as e:
                    print(type(e).__name__ + ": " + str(e))
                """
            let out = try XCTUnwrap(Self.python(["-c", script, server.ws, wrong]), "python3 did not finish within 30 s")
            XCTAssertFalse(out.output.contains("CONNECTED"), out.output)
            XCTAssertTrue(out.output.contains("401"), "python websockets: \(out.output)")
        }
        _ = try server.connect(fixture.staffToken) // and the server is still up
    }

    /// Runs python3 with `arguments`; nil if it cannot be run or takes over 30 s.
    static func python(_ arguments: [String]) -> (status: Int32, output: String)? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3"] + arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        let output = Guarded(Data())
        let read = DispatchSemaphore(value: 0)
        let handle = pipe.fileHandleForReading
        do { try process.run() } catch { return nil }
        Thread {
            let data = handle.readDataToEndOfFile()
            output.update { $0 = data }
            read.signal()
        }.start()
        waitUntil(30, poll: 0.05) { !process.isRunning }
        if process.isRunning {
            process.terminate()
            return nil
        }
        _ = read.wait(timeout: .now() + 5)
        return (process.terminationStatus, String(decoding: output.value, as: UTF8.self))
    }

    /// A browser's upgrade carries the site's cookies: 6 KB of them (an organisation's domain
    /// with analytics cookies) still connects (the limit was 2,048 bytes, and 431).
    func testAnUpgradeCarryingKilobytesOfCookiesConnects() throws {
        let server = try startServer()
        let socket = try RawSocket(port: server.port)
        let cookies = (0..<40).map { "tracker_\($0)=\(String(repeating: "c", count: 140))" }.joined(separator: "; ")
        XCTAssertGreaterThan(cookies.utf8.count, 6_000)
        let response = try socket.upgrade(token: fixture.staffToken, extraHeaders: [("Cookie", cookies)])
        XCTAssertEqual(response.status, 101, "\(response)")
        let frame = try XCTUnwrap(try socket.readWebSocketFrame(deadline: Date().addingTimeInterval(10)))
        XCTAssertTrue(String(decoding: frame.payload, as: UTF8.self).contains("\"hello\""), String(decoding: frame.payload, as: UTF8.self))
    }
}
