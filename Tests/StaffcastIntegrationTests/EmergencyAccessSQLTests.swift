import Foundation
import StaffcastCore
@testable import StaffcastPostgres
import XCTest

/// Row-level security of sql/007's tables, checked directly in PostgreSQL as each user (the
/// way the server acts): an event's admins and owners see its escalations, rounds and
/// last-seen times; staff see only the rounds that named them and their own last-seen rows;
/// outsiders nothing; nobody acting as a user writes any of them, and the audit triggers
/// still write as the send and the read happen.
final class EmergencyAccessSQLTests: AccessRulesTestCase {
    var message: StaffMessage!

    override func setUpWithError() throws {
        try super.setUpWithError()
        // Sent as the owner under row-level security: the trigger makes the escalation row.
        message = try fixture.store.send(as: fixture.owner, SendRequest(eventID: fixture.event, message: "Evacuate hall B",
                                                                       messageType: "emergency", escalateAfterMinutes: 5))
        try fixture.store.conn.query("""
            INSERT INTO escalation_rounds (message_id, event_id, round, unread) VALUES ($1, $2, 1, ARRAY[$3::uuid])
            """, [message.id.uuidString, fixture.event.uuidString, fixture.staff.uuidString])
        try fixture.store.conn.query("""
            INSERT INTO presence_seen (user_id, event_id, seen_at) VALUES ($1, $3, now()), ($2, $3, now())
            """, [fixture.staff.uuidString, fixture.admin.uuidString, fixture.event.uuidString])
    }

    func count(_ user: UUID, _ table: String) throws -> Int {
        try asUser(user) { try $0.query("SELECT count(*) FROM \(table)").int(0, 0) ?? -1 }
    }

    func assertRLSRefuses(_ user: UUID, _ sql: String, _ params: [String?] = [], file: StaticString = #filePath, line: UInt = #line) {
        assertRLSRefuses({ _ = try asUser(user) { try $0.query(sql, params) } }, file: file, line: line)
    }

    func testTheSendMadeItsEscalationRowWithTheAudienceOfThatMoment() throws {
        let r = try fixture.store.conn.query("SELECT audience::text[] FROM escalations WHERE message_id = $1", [message.id.uuidString])
        let audience = Set(Store.uuidArray(r.string(0, 0)))
        XCTAssertEqual(audience, [fixture.admin, fixture.staff], "everyone with access but the sender")
        XCTAssertEqual(try fixture.count("SELECT count(*) FROM audit_log WHERE action = 'message_send' AND user_id = $1",
                                         [fixture.owner.uuidString]), 1)
    }

    func testAdminsAndOwnersSeeEscalationsStaffOnlyTheirRoundsOutsidersNothing() throws {
        XCTAssertEqual(try count(fixture.owner, "escalations"), 1)
        XCTAssertEqual(try count(fixture.admin, "escalations"), 1)
        XCTAssertEqual(try count(fixture.staff, "escalations"), 0)
        XCTAssertEqual(try count(fixture.outsider, "escalations"), 0)

        XCTAssertEqual(try count(fixture.admin, "escalation_rounds"), 1)
        XCTAssertEqual(try count(fixture.staff, "escalation_rounds"), 1, "the round named them")
        XCTAssertEqual(try count(fixture.outsider, "escalation_rounds"), 0)
        // Named in a round but no longer with access: nothing.
        _ = try fixture.store.revoke(event: fixture.event, user: fixture.staff)
        XCTAssertEqual(try count(fixture.staff, "escalation_rounds"), 0)

        XCTAssertEqual(try count(fixture.owner, "presence_seen"), 2)
        XCTAssertEqual(try count(fixture.admin, "presence_seen"), 2)
        XCTAssertEqual(try count(fixture.outsider, "presence_seen"), 0)
    }

    func testStaffSeeOnlyTheirOwnLastSeen() throws {
        XCTAssertEqual(try count(fixture.staff, "presence_seen"), 1)
    }

    func testNobodyActingAsAUserWritesThem() {
        for user in [fixture.owner, fixture.admin, fixture.staff] {
            assertRLSRefuses(user, "UPDATE escalations SET finished_at = now()")
            assertRLSRefuses(user, "DELETE FROM escalations")
            assertRLSRefuses(user, "INSERT INTO escalation_rounds (message_id, event_id, round, unread) VALUES ($1, $2, 9, '{}')",
                             [message.id.uuidString, fixture.event.uuidString])
            assertRLSRefuses(user, "INSERT INTO presence_seen (user_id, event_id, seen_at) VALUES ($1, $2, now())",
                             [user.uuidString, fixture.event.uuidString])
            assertRLSRefuses(user, "INSERT INTO audit_log (actor, action) VALUES ('x', 'escalation')")
        }
    }

    func testAReadOfAnEmergencyIsAuditedAndARoundCannotBeRecordedTwice() throws {
        _ = try fixture.store.markRead(as: fixture.staff, message: message.id)
        XCTAssertEqual(try fixture.count("SELECT count(*) FROM audit_log WHERE action = 'message_read' AND user_id = $1",
                                         [fixture.staff.uuidString]), 1)
        // A read of a plain message is not audited.
        let plain = try fixture.store.send(as: fixture.owner, SendRequest(eventID: fixture.event, message: "Coffee"))
        _ = try fixture.store.markRead(as: fixture.staff, message: plain.id)
        XCTAssertEqual(try fixture.count("SELECT count(*) FROM audit_log WHERE action = 'message_read'"), 1)
        XCTAssertThrowsError(try fixture.store.conn.query("""
            INSERT INTO escalation_rounds (message_id, event_id, round, unread) VALUES ($1, $2, 1, '{}')
            """, [message.id.uuidString, fixture.event.uuidString]))
    }
}
