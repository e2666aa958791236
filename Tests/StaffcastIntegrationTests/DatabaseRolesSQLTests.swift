import Foundation
import StaffcastCore
@testable import StaffcastPostgres
import XCTest

/// Least privilege (sql/006_roles.sql), checked in SQL as the server's own login
/// (`staffcast_server`): not a superuser, no BYPASSRLS, owns nothing, and whatever a request
/// transaction does with SET ROLE / RESET ROLE it never becomes the tables' owner nor gets
/// past row-level security or its grants.
final class DatabaseRolesSQLTests: IntegrationTestCase {
    var login: PGConnection!

    override func setUpWithError() throws {
        try super.setUpWithError()
        login = try PGConnection(conninfo: TestDatabase.serverLogin(fixture.conninfo))
        _ = try fixture.store.send(as: fixture.owner, SendRequest(eventID: fixture.event, message: "hello"))
    }

    /// Runs `sql` as the login inside a transaction that is rolled back; the SQLSTATE it failed
    /// with, "0 rows" when it succeeded without touching a row, or nil when it had an effect.
    func failure(_ sql: String, asUser user: UUID? = nil, file: StaticString = #filePath, line: UInt = #line) -> String? {
        do {
            try login.execute("BEGIN")
            defer { _ = try? login.execute("ROLLBACK") }
            if let user {
                try login.execute("SET LOCAL ROLE staffcast_app")
                try login.query("SELECT set_config('staffcast.user_id', $1, true)", [user.uuidString.lowercased()])
            }
            let r = try login.execute(sql)
            return r.affectedRows == 0 && r.rowCount == 0 ? "0 rows" : nil
        } catch let e as PostgresError {
            return e.sqlState ?? "?"
        } catch {
            XCTFail("\(error)", file: file, line: line)
            return "?"
        }
    }

    func testTheLoginIsNoSuperuserBypassesNothingAndOwnsNothing() throws {
        let r = try login.query("""
            SELECT current_user, rolsuper, rolbypassrls, rolcreaterole, rolcreatedb, rolinherit,
                   (SELECT count(*) FROM pg_class c WHERE c.relowner = r.oid),
                   (SELECT count(*) FROM pg_auth_members m WHERE m.member = r.oid)
            FROM pg_roles r WHERE rolname = current_user
            """)
        XCTAssertEqual(r.string(0, 0), "staffcast_server")
        XCTAssertEqual(r.bool(0, 1), false, "superuser")
        XCTAssertEqual(r.bool(0, 2), false, "bypassrls")
        XCTAssertEqual(r.bool(0, 3), false, "createrole")
        XCTAssertEqual(r.bool(0, 4), false, "createdb")
        XCTAssertEqual(r.bool(0, 5), false, "it inherits nothing: staffcast_app's rights only by SET ROLE")
        XCTAssertEqual(r.int(0, 6), 0, "owns no table")
        XCTAssertEqual(r.int(0, 7), 1, "a member of staffcast_app and nothing else")
        XCTAssertEqual(try login.query("SELECT pg_has_role('staffcast_app', 'MEMBER')").bool(0, 0), true)
        let owner = try login.query("SELECT tableowner FROM pg_tables WHERE tablename = 'staff_messages'").string(0, 0) ?? ""
        XCTAssertEqual(try login.query("SELECT pg_has_role($1, 'MEMBER')", [owner]).bool(0, 0), false)
    }

    func testARequestCannotLeaveItsUserForTheOwner() throws {
        let owner = try login.query("SELECT tableowner FROM pg_tables WHERE tablename = 'staff_messages'").string(0, 0) ?? ""
        // SET ROLE to the owner (or any superuser) is refused, as the user or after RESET ROLE.
        XCTAssertEqual(failure("SET ROLE \(owner)", asUser: fixture.staff), "42501")
        XCTAssertEqual(failure("RESET ROLE; SET ROLE \(owner)", asUser: fixture.staff), "42501")
        XCTAssertEqual(failure("SET SESSION AUTHORIZATION \(owner)", asUser: fixture.staff), "42501")
        // RESET ROLE lands on the login, which is still no superuser and still under RLS.
        try login.execute("BEGIN")
        try login.execute("SET LOCAL ROLE staffcast_app")
        try login.execute("RESET ROLE")
        XCTAssertEqual(try login.query("SELECT current_user").string(0, 0), "staffcast_server")
        XCTAssertEqual(try login.query("SELECT rolsuper OR rolbypassrls FROM pg_roles WHERE rolname = current_user").bool(0, 0), false)
        try login.execute("ROLLBACK")
    }

    func testAfterResetRoleNothingCanBeForgedChangedOrErased() throws {
        let event = fixture.event.uuidString, owner = fixture.owner.uuidString, staff = fixture.staff.uuidString
        let forgeries = [
            // A message in the owner's name, a notification, an access level, a token.
            "INSERT INTO staff_messages (event_id, sender_id, message, message_type, priority) VALUES ('\(event)', '\(owner)', 'x', 'broadcast', 'urgent')",
            "UPDATE staff_messages SET sender_id = '\(staff)'",
            "DELETE FROM staff_messages",
            "INSERT INTO notifications (user_id, type, title, message) VALUES ('\(staff)', 't', 't', 'm')",
            "UPDATE notifications SET read = true",
            "INSERT INTO event_access (event_id, user_id, access_level) VALUES ('\(event)', '\(staff)', 'owner')",
            "UPDATE event_access SET access_level = 'owner'",
            "DELETE FROM event_access",
            "INSERT INTO api_tokens (token_hash, user_id) VALUES (decode(repeat('ab', 32), 'hex'), '\(owner)')",
            "UPDATE api_tokens SET revoked_at = NULL",
            "UPDATE api_tokens SET expires_at = NULL",
            "DELETE FROM api_tokens",
            "INSERT INTO profiles (id, display_name) VALUES (gen_random_uuid(), 'x')",
            // The audit log can be neither read nor written nor erased.
            "SELECT * FROM audit_log",
            "INSERT INTO audit_log (actor, action) VALUES ('x', 'grant')",
            "DELETE FROM audit_log",
            // No DDL: row-level security cannot be switched off, nor policies added.
            "ALTER TABLE staff_messages DISABLE ROW LEVEL SECURITY",
            "ALTER TABLE events NO FORCE ROW LEVEL SECURITY",
            "CREATE POLICY mine ON event_access FOR ALL TO staffcast_server USING (true)",
            "DROP TABLE presence",
            "CREATE TABLE public.x (i int)",
            "CREATE FUNCTION public.f() RETURNS int LANGUAGE sql AS 'SELECT 1'",
            "GRANT staffcast_server TO staffcast_app",
            "CREATE ROLE intruder SUPERUSER",
        ]
        for sql in forgeries {
            // As the user, and as the login after RESET ROLE: refused (or, for a user, filtered
            // to no row by row-level security).
            XCTAssertNotNil(failure(sql, asUser: fixture.admin), "as a user: \(sql)")
            XCTAssertNotNil(failure("RESET ROLE; " + sql, asUser: fixture.admin), "after RESET ROLE: \(sql)")
            XCTAssertNotNil(failure(sql), "as the login: \(sql)")
        }
        // Correcting a message's text is its event's admins' and owners' right (docs/protocol.md,
        // sql/008), never staff's, nor the login's after RESET ROLE.
        let edit = "UPDATE staff_messages SET message = 'changed'"
        XCTAssertNotNil(failure(edit, asUser: fixture.staff), "as staff: \(edit)")
        XCTAssertNotNil(failure("RESET ROLE; " + edit, asUser: fixture.admin), "after RESET ROLE: \(edit)")
        XCTAssertNotNil(failure(edit), "as the login: \(edit)")
        // The message is untouched.
        XCTAssertEqual(try fixture.count("SELECT count(*) FROM staff_messages WHERE message = 'hello'"), 1)
        XCTAssertEqual(try fixture.count("SELECT count(*) FROM staff_messages"), 1)
    }

    func testWithRowSecurityOffTheLoginIsRefusedNotLetThrough() throws {
        // row_security = off makes PostgreSQL refuse a query RLS would filter, for anyone
        // without BYPASSRLS, instead of silently showing every row.
        XCTAssertEqual(failure("SET LOCAL row_security = off; SELECT * FROM staff_messages", asUser: fixture.outsider), "42501")
        XCTAssertEqual(failure("RESET ROLE; SET LOCAL row_security = off; SELECT * FROM events", asUser: fixture.outsider), "42501")
    }

    func testWhatTheServerNeedsTheLoginMayDo() throws {
        // The change feed, the token table, presence, status and read marks, as StaffcastServer runs them.
        let store = Store(login)
        _ = try store.currentCursors()
        XCTAssertEqual(try store.validTokens().tokens.count, 4)
        _ = try store.changes(after: ChangeCursors(message: 0, notification: 0, access: 0, token: 0))
        try store.replacePresence(node: "n1", rows: [.init(node: "n1", connectionID: 1, userID: fixture.staff, eventID: fixture.event,
                                                             connectedSince: Date(), rttMs: 1.5)])
        XCTAssertEqual(try store.presence(event: fixture.event, excludingNode: "other").count, 1)
        XCTAssertEqual(try store.roster(event: fixture.event, asUser: nil).count, 3)
        XCTAssertEqual(try store.eventFacts([fixture.event]).count, 1)
        try store.recordTokenUse([TokenHasher.digest(of: fixture.staffToken)])
        let message = try store.send(as: fixture.owner, SendRequest(eventID: fixture.event, message: "as the owner, under RLS"))
        XCTAssertEqual(try store.markReadBatch([.init(user: fixture.staff, message: message.id)]).first??.eventID, fixture.event)
        // As a user, through the login, row-level security still decides.
        XCTAssertThrowsError(try store.send(as: fixture.staff, SendRequest(eventID: fixture.event, message: "staff may not")))
        XCTAssertEqual(try store.history(as: fixture.staff, event: fixture.event, beforeSeq: nil, limit: 10).count, 2)
    }
}
