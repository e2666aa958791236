import Foundation
import StaffcastClient
import StaffcastCore
import StaffcastPostgres
import XCTest

/// One convention on the command line (issue 20): durations, one error line, exit statuses,
/// one JSON document per command, the listing admin commands, and refusals that say what is
/// wrong (an expired token, a revoked one, TLS against plain HTTP). The real binary, a real
/// server and database.
final class ConventionsTests: IntegrationTestCase {
    override class var startsServer: Bool { true }

    var event: String { fixture.event.uuidString.lowercased() }

    func run(_ args: [String], token: String? = nil) throws -> CommandLineTests.Outcome {
        try CommandLineTests.execute(args, env: ["STAFFCAST_SERVER": server.http, "STAFFCAST_TOKEN": token ?? fixture.ownerToken,
                                                 "HOME": NSTemporaryDirectory()])
    }

    func admin(_ args: [String]) throws -> CommandLineTests.Outcome {
        try CommandLineTests.execute(["admin"] + args + ["--database-url", fixture.conninfo, "--log-level", "error"])
    }

    /// The newest message's minutes until it expires, and its escalation minutes.
    func newest() throws -> (expires: Double, escalate: Int?) {
        let r = try fixture.store.conn.query("""
            SELECT extract(epoch FROM expires_at - sent_at) / 60, escalate_after_minutes FROM staff_messages ORDER BY seq DESC LIMIT 1
            """)
        return (Double(r.string(0, 0) ?? "") ?? -1, r.int(0, 1))
    }

    func testDurationsAreWrittenTheSameEverywhere() throws {
        let twoHours = try run(["send", "--event", event, "--expires", "2h", "Shuttle at gate 2"])
        XCTAssertEqual(twoHours.status, 0, twoHours.stderr)
        XCTAssertEqual(try newest().expires, 120, accuracy: 0.01)
        let plain = try run(["send", "--event", event, "--expires", "30", "Plain minutes still work"])
        XCTAssertEqual(plain.status, 0, plain.stderr)
        XCTAssertEqual(try newest().expires, 30, accuracy: 0.01)
        let escalating = try run(["send", "--event", event, "--type", "emergency", "--escalate-after", "10m", "--expires", "1d",
                                  "Medical team to stage 2"])
        XCTAssertEqual(escalating.status, 0, escalating.stderr)
        XCTAssertEqual(try newest().escalate, 10)
        XCTAssertEqual(try newest().expires, 1_440, accuracy: 0.01)
        let remind = try run(["remind", "--event", event, "--before", "1h", "--expires", "45m", "x"])
        XCTAssertNotEqual(remind.status, 64, "remind takes --expires 45m: \(remind.stderr)")
        // A value that is no duration: the command line is wrong (64), and it says which option.
        let bad = try run(["send", "--event", event, "--expires", "2x", "never sent"])
        XCTAssertEqual(bad.status, 64, bad.stderr)
        XCTAssertTrue(bad.stderr.contains("--expires"), bad.stderr)
        XCTAssertEqual(fixture.messageCount, 3)
    }

    func testOneErrorLineAndExitStatusesByKind() throws {
        // Not allowed (forbidden): 2, one line "staffcast: <sentence> [code]".
        let forbidden = try run(["send", "--event", event, "hi"], token: fixture.staffToken)
        XCTAssertEqual(forbidden.status, 2, forbidden.stderr)
        let lines = forbidden.stderr.split(separator: "\n")
        XCTAssertEqual(lines.count, 1, forbidden.stderr)
        XCTAssertTrue(lines[0].hasPrefix("staffcast: ") && lines[0].hasSuffix("[forbidden]"), forbidden.stderr)
        // Not found: 2, also for watch (it said 1 while --help said 2).
        XCTAssertEqual(try run(["history", "--event", UUID().uuidString.lowercased()]).status, 2)
        let watch = try run(["watch", "--json", "--event", UUID().uuidString.lowercased()])
        XCTAssertEqual(watch.status, 2, watch.stderr)
        XCTAssertTrue(watch.stderr.contains("cannot watch event"), watch.stderr)
        XCTAssertEqual(try run(["watch", "--json", "--event", event], token: "sc_not-a-real-token").status, 2)
        // A refused request (a duplicate): 1, with its code.
        XCTAssertEqual(try run(["send", "--event", event, "Gates open"]).status, 0)
        let duplicate = try run(["send", "--event", event, "Gates open"])
        XCTAssertEqual(duplicate.status, 1, duplicate.stderr)
        XCTAssertTrue(duplicate.stderr.hasPrefix("staffcast: ") && duplicate.stderr.contains("[conflict]"), duplicate.stderr)
        // Unavailable: 3 (nothing listens there), for status too.
        let down = try CommandLineTests.execute(["status", "--server", "http://127.0.0.1:1"], env: ["HOME": NSTemporaryDirectory()])
        XCTAssertEqual(down.status, 3, down.stderr)
        XCTAssertEqual(down.stderr.split(separator: "\n").count, 1, down.stderr)
        // A ready server: 0; a status the token may not see: 2, not the "not ready" status.
        XCTAssertEqual(try run(["status"]).status, 0)
        let roster = try run(["status", "--event", event], token: fixture.outsiderToken)
        XCTAssertEqual(roster.status, 2, roster.stderr)
        // --help documents them.
        let help = try CommandLineTests.execute(["--help"])
        XCTAssertTrue(help.stdout.contains("Exit status: 0 done; 1 refused"), help.stdout)
        XCTAssertTrue(try CommandLineTests.execute(["status", "--help"]).stdout.contains("3 unavailable"))
    }

    /// A token file named on the command line wins over STAFFCAST_TOKEN in the environment: a
    /// staff member checking in from the organiser's shell was checked in as the organiser.
    func testATokenFileOnTheCommandLineWinsOverTheEnvironment() throws {
        let file = NSTemporaryDirectory() + "staff-\(UUID().uuidString.prefix(8)).token"
        FileManager.default.createFile(atPath: file, contents: Data(fixture.staffToken.utf8), attributes: [.posixPermissions: 0o600])
        defer { try? FileManager.default.removeItem(atPath: file) }
        let sent = try run(["send", "--event", event, "--token-file", file, "Sent as staff?"]) // env: the owner's token
        XCTAssertEqual(sent.status, 2, "the staff token from the file must be used, and staff may not send: \(sent.stderr)")
        XCTAssertTrue(sent.stderr.contains("[forbidden]"), sent.stderr)
    }

    func testAnExpiredARevokedAndAWrongTokenAreToldApart() throws {
        func refusal(_ token: String) throws -> String {
            let r = try server.api(token).raw("GET", "/v1/me/events")
            XCTAssertEqual(r.status, 401)
            return String(decoding: r.body, as: UTF8.self)
        }
        // Expired while the server runs: known first (within 2 s), then refused.
        let short = try fixture.store.issueToken(user: fixture.staff, expiresIn: 6)
        try waitUntil(5) { try server.api(short).raw("GET", "/v1/me/events").status == 200 }
        try waitUntil(15) { try server.api(short).raw("GET", "/v1/me/events").status != 200 }
        XCTAssertTrue(try refusal(short).contains("has expired"))
        // Expired before the server started.
        let old = try fixture.store.issueToken(user: fixture.staff, expiresIn: 3_600)
        try fixture.store.conn.execute("UPDATE api_tokens SET expires_at = now() - interval '1 hour' WHERE expires_at > now()")
        server.stop()
        server = try TestServer(conninfo: fixture.conninfo)
        XCTAssertTrue(try refusal(old).contains("has expired"))
        // Revoked.
        let revoked = try fixture.store.issueToken(user: fixture.staff)
        try waitUntil(10) { try server.api(revoked).raw("GET", "/v1/me/events").status == 200 }
        try fixture.store.revokeToken(revoked)
        try waitUntil(10) { try server.api(revoked).raw("GET", "/v1/me/events").status != 200 }
        XCTAssertTrue(try refusal(revoked).contains("was revoked"))
        // Never one of ours.
        let wrong = try refusal("sc_" + String(repeating: "A", count: 43))
        XCTAssertTrue(wrong.contains("is not valid"), wrong)
        XCTAssertFalse(wrong.contains("expired") || wrong.contains("revoked"), wrong)
        // The WebSocket upgrade says the same.
        XCTAssertThrowsError(try WebSocketClient(url: server.ws, headers: ["Authorization": "Bearer \(old)"])) { error in
            XCTAssertTrue("\(error)".contains("has expired"), "\(error)")
        }
        // And the command line shows it, exit 2.
        let cli = try run(["history", "--event", event], token: old)
        XCTAssertEqual(cli.status, 2)
        XCTAssertTrue(cli.stderr.contains("has expired") && cli.stderr.contains("[unauthorized]"), cli.stderr)
    }

    func testHTTPSAgainstAPlainServerAndPlainAgainstATLSServerSaySo() throws {
        let https = try CommandLineTests.execute(["status", "--server", "https://127.0.0.1:\(server.port)"],
                                                 env: ["HOME": NSTemporaryDirectory()])
        XCTAssertNotEqual(https.status, 0)
        XCTAssertTrue(https.stderr.contains("answers in plain HTTP, not TLS: use http://"), https.stderr)
        XCTAssertFalse(https.stderr.contains("SSL routines"), https.stderr)

        let certificates = try TestCertificates()
        defer { certificates.remove() }
        let tls = try startServer { c in
            c.tlsCertificate = certificates.certificate
            c.tlsKey = certificates.key
        }
        let plain = try CommandLineTests.execute(["status", "--server", "http://127.0.0.1:\(tls.port)"],
                                                 env: ["HOME": NSTemporaryDirectory()])
        XCTAssertNotEqual(plain.status, 0)
        XCTAssertTrue(plain.stderr.contains("use https://"), plain.stderr)
        let watch = try CommandLineTests.execute(["watch", "--json", "--server", "http://127.0.0.1:\(tls.port)", "--token", fixture.staffToken,
                                                  "--event", event], env: ["HOME": NSTemporaryDirectory()])
        XCTAssertNotEqual(watch.status, 0)
        XCTAssertTrue(watch.stderr.contains("use https://"), watch.stderr)
    }

    func testAdminListsSetsAndRevokesOneTokenByID() throws {
        // event list (one JSON array), then set the start and the name
        var list = try admin(["event", "list", "--json"])
        XCTAssertEqual(list.status, 0, list.stderr)
        var events = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [[String: Any]], list.stdout)
        var mine = try XCTUnwrap(events.first { $0["id"] as? String == event })
        XCTAssertEqual(mine["name"] as? String, "Summer Festival")
        XCTAssertEqual(mine["staff"] as? Int, 1)
        XCTAssertTrue(mine["starts_at"] is NSNull, "\(mine)")
        let start = RFC3339.format(Date().addingTimeInterval(30 * 86_400).rounded())
        let set = try admin(["event", "set", "--event", event, "--starts-at", start, "--name", "Summer Festival 2030"])
        XCTAssertEqual(set.status, 0, set.stderr)
        list = try admin(["event", "list", "--json"])
        events = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [[String: Any]])
        mine = try XCTUnwrap(events.first { $0["id"] as? String == event })
        XCTAssertEqual((mine["starts_at"] as? String).flatMap(RFC3339.parse), RFC3339.parse(start))
        XCTAssertEqual(mine["name"] as? String, "Summer Festival 2030")
        let table = try admin(["event", "list"])
        XCTAssertTrue(table.stdout.contains(event) && table.stdout.contains("Summer Festival 2030"), table.stdout)
        // With a start, --before-start works.
        let briefing = try run(["send", "--event", event, "--before-start", "2h", "Briefing"])
        XCTAssertEqual(briefing.status, 0, briefing.stderr)
        XCTAssertEqual(try admin(["event", "set", "--event", UUID().uuidString, "--name", "x"]).status, 2)

        // user list
        let users = try admin(["user", "list", "--event", event])
        XCTAssertEqual(users.status, 0, users.stderr)
        for name in ["Olivia Owner", "Adam Admin", "Sam Staff"] { XCTAssertTrue(users.stdout.contains(name), users.stdout) }
        XCTAssertFalse(users.stdout.contains("Oscar Outsider"), "only the event's people")
        XCTAssertTrue(users.stdout.contains(fixture.staff.uuidString.lowercased()))

        // token list shows ids; revoke --id ends that token only
        let second = try fixture.store.issueToken(user: fixture.staff, label: "lost phone")
        let tokens = try admin(["token", "list", "--user", fixture.staff.uuidString.lowercased(), "--json"])
        let rows = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(tokens.stdout.utf8)) as? [[String: Any]])
        let lost = try XCTUnwrap(rows.first { $0["label"] as? String == "lost phone" }?["id"] as? String)
        XCTAssertTrue(try admin(["token", "list", "--user", fixture.staff.uuidString.lowercased()]).stdout.contains(lost))
        let revoked = try admin(["token", "revoke", "--id", lost])
        XCTAssertEqual(revoked.status, 0, revoked.stderr)
        XCTAssertTrue(revoked.stderr.contains("revoked token \(lost)"), revoked.stderr)
        XCTAssertNil(try fixture.store.authenticate(token: second))
        XCTAssertEqual(try fixture.store.authenticate(token: fixture.staffToken)?.userID, fixture.staff, "the other token still works")
        XCTAssertEqual(try admin(["token", "revoke", "--id", UUID().uuidString]).status, 2)

        // audit --json: one document
        let audit = try admin(["audit", "--event", event, "--json"])
        XCTAssertNotNil(try JSONSerialization.jsonObject(with: Data(audit.stdout.utf8)) as? [[String: Any]], audit.stdout)
    }
}

private extension Date {
    /// Whole seconds (what an RFC 3339 time on the command line says).
    func rounded() -> Date { Date(timeIntervalSince1970: timeIntervalSince1970.rounded()) }
}
