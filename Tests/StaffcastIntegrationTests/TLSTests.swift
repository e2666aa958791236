import Foundation
import StaffcastClient
import StaffcastCore
@testable import StaffcastPostgres
import StaffcastServer
import XCTest

/// A test CA and a server certificate for 127.0.0.1 and localhost, made with the openssl
/// command in a fresh directory.
struct TestCertificates {
    let directory: String
    var ca: String { directory + "/ca.pem" }
    var certificate: String { directory + "/server.pem" }
    var key: String { directory + "/server.key" }
    /// A second CA that signed nothing the server uses.
    var otherCA: String { directory + "/other-ca.pem" }

    init() throws {
        directory = NSTemporaryDirectory() + "sc-tls-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        try Self.openssl(["req", "-x509"] + ec + ["-keyout", directory + "/ca.key", "-out", ca, "-days", "2",
                                                   "-subj", "/CN=staffcast test CA"])
        try Self.openssl(["req", "-x509"] + ec + ["-keyout", directory + "/other-ca.key", "-out", otherCA, "-days", "2",
                                                   "-subj", "/CN=another CA"])
        try Self.openssl(["req"] + ec + ["-keyout", key, "-out", directory + "/server.csr", "-subj", "/CN=localhost"])
        try "subjectAltName=IP:127.0.0.1,DNS:localhost\n".write(toFile: directory + "/ext", atomically: true, encoding: .utf8)
        try Self.openssl(["x509", "-req", "-in", directory + "/server.csr", "-CA", ca, "-CAkey", directory + "/ca.key",
                          "-CAcreateserial", "-out", certificate, "-days", "2", "-extfile", directory + "/ext"])
    }

    func remove() { try? FileManager.default.removeItem(atPath: directory) }

    static func openssl(_ args: [String]) throws {
        let outcome = try ProcessRunner.run("/usr/bin/env", ["openssl"] + args)
        guard outcome.status == 0 else {
            throw StaffcastError(.internal, "openssl \(args.joined(separator: " ")) failed: \(outcome.output)")
        }
    }
}

/// The server on TLS (`tls_cert`/`tls_key`): https and wss on one port through libwebsockets'
/// OpenSSL, the clients verifying it with `--ca-file`, and what a plain client meets there.
final class TLSTests: IntegrationTestCase {
    var certificates: TestCertificates!
    let socketName = "sc-tls-\(UUID().uuidString.prefix(8))"

    override func setUpWithError() throws {
        try super.setUpWithError()
        certificates = try TestCertificates()
        try startServer { [certificates] c in
            c.tlsCertificate = certificates!.certificate
            c.tlsKey = certificates!.key
        }
    }

    /// Stops the test server and starts it again on TLS with `configure`'s settings too.
    func restartOnTLS(_ configure: (inout ServerConfiguration) -> Void) throws {
        server.stop()
        server = try startServer { [certificates] c in
            c.tlsCertificate = certificates!.certificate
            c.tlsKey = certificates!.key
            configure(&c)
        }
    }

    override func tearDown() {
        _ = try? ProcessRunner.run("/usr/bin/tmux", ["-L", socketName, "kill-server"])
        super.tearDown()
        certificates?.remove()
        certificates = nil
    }

    var https: String { "https://127.0.0.1:\(server.port)" }
    var wss: String { "wss://127.0.0.1:\(server.port)/v1/ws" }
    var trust: TLSTrust { TLSTrust(caFile: certificates.ca) }
    var messagesPath: String { "/v1/events/\(fixture.event.uuidString.lowercased())/messages" }

    func api(_ token: String?) throws -> APIClient { try APIClient(server: https, token: token, trust: trust) }

    func testHTTPSAnswersHealthAndTheJSONAPI() throws {
        XCTAssertEqual(try api(nil).raw("GET", "/healthz").status, 200)
        let body = try JSONSerialization.data(withJSONObject: ["message": "Gates open", "priority": "high"])
        let r = try api(fixture.ownerToken).raw("POST", messagesPath, body: body, contentType: "application/json")
        XCTAssertEqual(r.status, 201, String(decoding: r.body, as: UTF8.self))
        XCTAssertEqual(try JSONDecoder().decode(StaffMessage.self, from: r.body).message, "Gates open")
        // A JSON error comes back whole too.
        let refused = try api("not-a-token").raw("POST", messagesPath, body: body, contentType: "application/json")
        XCTAssertEqual(refused.status, 401)
        XCTAssertNotNil(try JSONSerialization.jsonObject(with: refused.body) as? [String: Any])
        // A standard client (curl offers h2 by ALPN; the server must settle on HTTP/1.1).
        let curl = try ProcessRunner.run("/usr/bin/env", ["curl", "-sS", "--max-time", "5", "--cacert", certificates.ca,
                                                          "-H", "Authorization: Bearer \(fixture.ownerToken)", "\(https)\(messagesPath)"])
        XCTAssertEqual(curl.status, 0, curl.output)
        XCTAssertTrue(curl.output.contains("Gates open"), curl.output)
    }

    func testLargeBodyOverTLSIsAnsweredNotStalled() throws {
        // Bigger than one read and one TLS record: written out a record at a time.
        let text = String(repeating: "x", count: 60_000)
        let body = try JSONSerialization.data(withJSONObject: ["message": text])
        let r = try api(fixture.ownerToken).raw("POST", messagesPath, body: body, contentType: "application/json")
        XCTAssertTrue([201, 400, 413].contains(r.status), "status \(r.status)")
        XCTAssertNotNil(try JSONSerialization.jsonObject(with: r.body) as? [String: Any])
    }

    func testWSSSubscriberReceivesAMessageSentOverHTTPS() throws {
        let socket = TestSocket(try WebSocketClient(url: wss, headers: ["Authorization": "Bearer \(fixture.staffToken)"], trust: trust))
        _ = try socket.expect("hello")
        _ = try socket.subscribe(fixture.event)
        let sent = try api(fixture.ownerToken).sendMessage(event: fixture.event, message: "Over TLS", type: nil, priority: nil,
                                                           expiresInMinutes: nil)
        guard case .message(let live) = try socket.expect("message") else { return XCTFail("no message") }
        XCTAssertEqual(live.id, sent.id)
        XCTAssertEqual(live.message, "Over TLS")
        // The upgrade decision is the same as on plain HTTP: a bad token gets 401 before any upgrade.
        XCTAssertThrowsError(try WebSocketClient(url: wss, headers: ["Authorization": "Bearer nope"], trust: trust)) { error in
            guard case ClientError.handshake(let status, _) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(status, 401)
        }
    }

    func testAWSSConnectionOutlivesTheTLSEstablishTimeout() throws {
        // libwebsockets arms a 10 s timeout when a TLS handshake completes; a quiet subscriber
        // must still be there after it (every TLS connection was dropped at 10 s before).
        let socket = TestSocket(try WebSocketClient(url: wss, headers: ["Authorization": "Bearer \(fixture.staffToken)"], trust: trust))
        _ = try socket.expect("hello")
        _ = try socket.subscribe(fixture.event)
        sleep(12) // past the 10 s timeout: letting it pass is what is tested
        _ = try api(fixture.ownerToken).sendMessage(event: fixture.event, message: "Still here?", type: nil, priority: nil,
                                                    expiresInMinutes: nil)
        guard case .message(let live) = try socket.expect("message") else { return XCTFail("no message") }
        XCTAssertEqual(live.message, "Still here?")
    }

    func testGracefulStopClosesAWSSClientWith1001() throws {
        let socket = TestSocket(try WebSocketClient(url: wss, headers: ["Authorization": "Bearer \(fixture.staffToken)"], trust: trust))
        _ = try socket.expect("hello")
        server.stop()
        server = nil
        // The close frame went out through TLS before the loop ended.
        var code: UInt16?
        let deadline = Date().addingTimeInterval(10)
        while code == nil, Date() < deadline {
            do {
                _ = try socket.nextOrNil(timeout: 1)
            } catch ClientError.closed(let c, _) {
                code = c
            }
        }
        XCTAssertEqual(code, 1001)
    }

    func testClientsRefuseAServerTheyCannotVerify() throws {
        for caFile in [nil, certificates.otherCA] {
            XCTAssertThrowsError(try APIClient(server: https, token: nil, trust: TLSTrust(caFile: caFile)).raw("GET", "/healthz")) { error in
                guard case ClientError.tls(let why) = error else { return XCTFail("\(error)") }
                XCTAssertTrue(why.contains("certificate is not trusted"), why)
            }
            XCTAssertThrowsError(try WebSocketClient(url: wss, headers: ["Authorization": "Bearer \(fixture.staffToken)"],
                                                     trust: TLSTrust(caFile: caFile))) { error in
                guard case ClientError.tls = error else { return XCTFail("\(error)") }
            }
        }
        // The certificate names 127.0.0.1 and localhost, nothing else.
        XCTAssertNoThrow(try APIClient(server: "https://localhost:\(server.port)", token: nil, trust: trust).raw("GET", "/healthz"))
    }

    func testSendAndStatusCommandsWithAndWithoutCAFile() throws {
        let event = fixture.event.uuidString.lowercased()
        let sent = try CommandLineTests.execute(["send", "--server", https, "--ca-file", certificates.ca, "--token", fixture.ownerToken,
                                                 "--event", event, "Hello over https"])
        XCTAssertEqual(sent.status, 0, sent.stderr)
        XCTAssertNotNil(UUID(uuidString: sent.stdout.trimmingCharacters(in: .whitespacesAndNewlines)), sent.stdout)
        XCTAssertFalse(sent.stderr.contains("warning"), sent.stderr)
        let viaEnv = try CommandLineTests.execute(["send", "--server", https, "--event", event, "Via env"],
                                                  env: ["STAFFCAST_CA_FILE": certificates.ca, "STAFFCAST_TOKEN": fixture.ownerToken])
        XCTAssertEqual(viaEnv.status, 0, viaEnv.stderr)

        let refused = try CommandLineTests.execute(["send", "--server", https, "--token", fixture.ownerToken, "--event", event, "No CA"],
                                                   env: ["STAFFCAST_CA_FILE": ""])
        XCTAssertNotEqual(refused.status, 0)
        XCTAssertTrue(refused.stderr.contains("certificate is not trusted") && refused.stderr.contains("--ca-file"), refused.stderr)
        let watch = try CommandLineTests.execute(["watch", "--json", "--server", https, "--token", fixture.staffToken, "--event", event],
                                                 env: ["STAFFCAST_CA_FILE": "", "HOME": certificates.directory])
        XCTAssertNotEqual(watch.status, 0)
        XCTAssertTrue(watch.stderr.contains("certificate is not trusted"), watch.stderr)

        let status = try CommandLineTests.execute(["status", "--server", https, "--ca-file", certificates.ca, "--token", fixture.ownerToken,
                                                   "--event", event])
        XCTAssertEqual(status.status, 0, status.stderr)
        XCTAssertEqual(fixture.messageCount, 2)
    }

    func testWatchInATerminalWithCAFile() throws {
        let home = certificates.directory
        let command = "env -u NO_COLOR HOME=\(home) TERM=xterm-256color \(CommandLineTests.binary) watch --server \(https) --ca-file \(certificates.ca) --token \(fixture.staffToken) --event \(fixture.event.uuidString.lowercased())"
        _ = try ProcessRunner.run("/usr/bin/tmux", ["-L", socketName, "new-session", "-d", "-x", "80", "-y", "24", command])
        func screen() -> String { (try? ProcessRunner.run("/usr/bin/tmux", ["-L", socketName, "capture-pane", "-p"]).output) ?? "" }
        func wait(_ condition: (String) -> Bool) -> Bool { waitUntil(10) { condition(screen()) } }
        XCTAssertTrue(wait { $0.contains("● connected") }, "watch did not connect over wss:\n\(screen())")
        _ = try api(fixture.ownerToken).sendMessage(event: fixture.event, message: "Doors at seven", type: nil, priority: nil,
                                                    expiresInMinutes: nil)
        XCTAssertTrue(wait { $0.contains("Doors at seven") }, "the message did not reach watch:\n\(screen())")
    }

    func testPlainHTTPOnTheTLSPortDoesNotStallOthers() throws {
        // One speaks plain HTTP to the TLS port, one connects and says nothing.
        let plain = try RawSocket(port: server.port)
        try plain.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        let silent = try RawSocket(port: server.port)
        // Everyone else keeps being served meanwhile.
        for _ in 0..<3 { XCTAssertEqual(try api(nil).raw("GET", "/healthz").status, 200) }
        let socket = TestSocket(try WebSocketClient(url: wss, headers: ["Authorization": "Bearer \(fixture.staffToken)"], trust: trust))
        _ = try socket.expect("hello")
        // The plain client is closed (its bytes are not a TLS handshake), not left hanging.
        XCTAssertNotEqual(plain.waitForClose(deadline: Date().addingTimeInterval(5)).outcome, .open,
                          "the plain-HTTP client was not closed")
        _ = silent
        XCTAssertEqual(try api(nil).raw("GET", "/healthz").status, 200)
    }

    func testCheckConfigRefusesBadTLSSettings() throws {
        let good = try CommandLineTests.execute(["serve", "--check-config", "--tls-cert", certificates.certificate,
                                                 "--tls-key", certificates.key])
        XCTAssertEqual(good.status, 0, good.stderr)
        XCTAssertTrue(good.stdout.contains("tls_cert: \(certificates.certificate)"), good.stdout)

        let half = try CommandLineTests.execute(["serve", "--check-config", "--tls-cert", certificates.certificate])
        XCTAssertNotEqual(half.status, 0)
        XCTAssertTrue(half.stderr.contains("tls_cert and tls_key go together"), half.stderr)

        let missing = try CommandLineTests.execute(["serve", "--check-config"],
                                                   env: ["STAFFCAST_TLS_CERT": certificates.certificate,
                                                         "STAFFCAST_TLS_KEY": certificates.directory + "/nope.key"])
        XCTAssertNotEqual(missing.status, 0)
        XCTAssertTrue(missing.stderr.contains("cannot read tls_key"), missing.stderr)

        // Readable but wrong: a key that does not belong to the certificate, and a file that is not PEM.
        let wrongKey = try CommandLineTests.execute(["serve", "--check-config", "--tls-cert", certificates.certificate,
                                                     "--tls-key", certificates.directory + "/ca.key"])
        XCTAssertNotEqual(wrongKey.status, 0)
        XCTAssertTrue(wrongKey.stderr.contains("refused"), wrongKey.stderr)
        let notPEM = try CommandLineTests.execute(["serve", "--check-config", "--tls-cert", certificates.directory + "/ext",
                                                   "--tls-key", certificates.key])
        XCTAssertNotEqual(notPEM.status, 0)
        XCTAssertTrue(notPEM.stderr.contains("refused"), notPEM.stderr)

        let config = certificates.directory + "/staffcast.yaml"
        try "tls_cert: \(certificates.certificate)\ntls_key: \(certificates.key)\n".write(toFile: config, atomically: true, encoding: .utf8)
        let file = try CommandLineTests.execute(["serve", "--check-config", "--config", config])
        XCTAssertEqual(file.status, 0, file.stderr)
        XCTAssertTrue(file.stdout.contains("tls_key: \(certificates.key)"), file.stdout)
    }
}
