import Foundation
import StaffcastCore
import StaffcastPostgres
import XCTest

/// Row-level security of the toolbox's tables (sql/008), checked directly in PostgreSQL as
/// each user, the way the server acts (SET LOCAL ROLE staffcast_app + staffcast.user_id).
final class ToolboxAccessRulesSQLTests: AccessRulesTestCase {

    func schedule(_ user: UUID, sender: UUID? = nil, event: UUID? = nil, status: String = "pending") throws {
        _ = try asUser(user) {
            try $0.query("""
                INSERT INTO scheduled_messages (event_id, sender_id, message, message_type, priority, send_at, status)
                VALUES ($1, $2, 'later', 'broadcast', 'normal', now() + interval '1 hour', $3)
                """, [(event ?? fixture.event).uuidString, (sender ?? user).uuidString, status])
        }
    }

    func visible(_ user: UUID) throws -> Int {
        try asUser(user) { try $0.query("SELECT count(*) FROM scheduled_messages").int(0, 0) ?? -1 }
    }

    func testOnlyAdminsAndOwnersScheduleAsThemselves() throws {
        try schedule(fixture.owner)
        try schedule(fixture.admin)
        assertRLSRefuses { try self.schedule(fixture.staff) }
        assertRLSRefuses { try self.schedule(fixture.outsider) }
        // Not in someone else's name, and not already "sent".
        assertRLSRefuses { try self.schedule(fixture.admin, sender: fixture.owner) }
        assertRLSRefuses { try self.schedule(fixture.admin, status: "sent") }
    }

    func testStaffAndOutsidersSeeNoScheduledSends() throws {
        try schedule(fixture.owner)
        XCTAssertEqual(try visible(fixture.owner), 1)
        XCTAssertEqual(try visible(fixture.admin), 1)
        XCTAssertEqual(try visible(fixture.staff), 0)
        XCTAssertEqual(try visible(fixture.outsider), 0)
        // An owner of another event sees none of this one's.
        let other = try fixture.store.createEvent(name: "Other", startsAt: nil)
        try fixture.store.grant(event: other, user: fixture.outsider, level: .owner)
        XCTAssertEqual(try visible(fixture.outsider), 0)
    }

    func testOnlyCancelIsAnUpdateAndOnlyByOrganisers() throws {
        try schedule(fixture.owner)
        func update(_ user: UUID, _ set: String) throws -> Int {
            try asUser(user) { try $0.query("UPDATE scheduled_messages SET \(set)").affectedRows }
        }
        // Staff see no row, so nothing changes.
        XCTAssertEqual(try update(fixture.staff, "status = 'cancelled'"), 0)
        // Marking it sent is the scheduler's, not a user's.
        assertRLSRefuses { _ = try update(fixture.admin, "status = 'sent'") }
        // Other columns are not the user's to change at all.
        assertRLSRefuses { _ = try update(fixture.admin, "message = 'changed'") }
        XCTAssertEqual(try update(fixture.admin, "status = 'cancelled'"), 1)
        XCTAssertEqual(try fixture.count("SELECT count(*) FROM scheduled_messages WHERE status = 'cancelled'"), 1)
    }
}
