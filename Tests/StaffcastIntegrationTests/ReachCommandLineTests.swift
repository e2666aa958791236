import Foundation
import StaffcastClient
import StaffcastCore
import StaffcastPostgres
import XCTest

/// The reach features on the command line: `admin user create --email`, `admin user set`, and
/// the delivery funnel in `staffcast receipts`.
final class ReachCommandLineTests: IntegrationTestCase {

    override class var startsServer: Bool { true }

    func run(_ args: [String]) throws -> CommandLineTests.Outcome {
        try CommandLineTests.execute(args, env: ["STAFFCAST_DATABASE_URL": fixture.conninfo, "STAFFCAST_SERVER": server.http,
                                                 "STAFFCAST_TOKEN": fixture.ownerToken, "HOME": NSTemporaryDirectory()])
    }

    func testUsersGetAndLoseEmailAddresses() throws {
        let made = try run(["admin", "user", "create", "--name", "Ayşe (gate 2)", "--email", "ayse@example.org"])
        XCTAssertEqual(made.status, 0, made.stderr)
        let id = try XCTUnwrap(UUID(uuidString: made.stdout.trimmingCharacters(in: .whitespacesAndNewlines)), made.stdout)
        XCTAssertEqual(try fixture.store.email(user: id), "ayse@example.org")
        let bad = try run(["admin", "user", "create", "--name", "Bo", "--email", "bo at example"])
        XCTAssertEqual(bad.status, 1)
        XCTAssertTrue(bad.stderr.contains("is not an email address"), bad.stderr)
        let set = try run(["admin", "user", "set", "--user", id.uuidString, "--email", "ayse@festival.example"])
        XCTAssertEqual(set.status, 0, set.stderr)
        XCTAssertEqual(try fixture.store.email(user: id), "ayse@festival.example")
        XCTAssertEqual(try run(["admin", "user", "set", "--user", id.uuidString, "--email", ""]).status, 0)
        XCTAssertNil(try fixture.store.email(user: id))
        XCTAssertEqual(try run(["admin", "user", "set", "--user", UUID().uuidString, "--email", "x@y.org"]).status, 2, "not found: exit 2")
    }

    func testReceiptsPrintTheFunnel() throws {
        let m = try fixture.store.send(as: fixture.owner, SendRequest(eventID: fixture.event, message: "Doors at 9"))
        // As the outbox records them (sql/012): Sam was live, the admin got a push.
        try fixture.store.conn.query("""
            INSERT INTO message_reach (message_id, user_id, via, at)
            VALUES ($1, $2, 'live', '2026-07-01T10:00:01Z'), ($1, $3, 'push', '2026-07-01T10:00:02Z')
            """, [m.id.uuidString, fixture.staff.uuidString, fixture.admin.uuidString])
        let out = try run(["receipts", m.id.uuidString.lowercased()])
        XCTAssertEqual(out.status, 0, out.stderr)
        XCTAssertTrue(out.stdout.contains("reached: live 1 · push 1 · email 0 · read 0"), out.stdout)
        XCTAssertTrue(out.stdout.contains("Sam Staff  [live "), out.stdout)
        XCTAssertTrue(out.stdout.contains("Adam Admin  [push "), out.stdout)
        let json = try run(["receipts", m.id.uuidString.lowercased(), "--json"])
        let object = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
        XCTAssertEqual(object?["totals"] as? [String: Int], ["live": 1, "push": 1, "email": 0, "read": 0])
    }
}
