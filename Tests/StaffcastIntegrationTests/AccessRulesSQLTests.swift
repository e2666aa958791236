import Foundation
import StaffcastCore
import StaffcastPostgres
import XCTest

/// The access rules of docs/protocol.md (access levels) checked directly in PostgreSQL, acting as each user
/// the way the server does (SET LOCAL ROLE staffcast_app + staffcast.user_id): row-level
/// security refuses even if the server's own checks had a bug.
final class AccessRulesSQLTests: AccessRulesTestCase {
    var message: StaffMessage!

    override func setUpWithError() throws {
        try super.setUpWithError()
        message = try fixture.store.send(as: fixture.owner, SendRequest(eventID: fixture.event, message: "hello"))
    }

    func visibleMessages(_ user: UUID) throws -> Int {
        try asUser(user) { try $0.query("SELECT count(*) FROM staff_messages").int(0, 0) ?? -1 }
    }

    func insertMessage(_ user: UUID) throws {
        _ = try asUser(user) {
            try $0.query("""
                INSERT INTO staff_messages (event_id, sender_id, message, message_type, priority)
                VALUES ($1, $2, 'x', 'broadcast', 'normal')
                """, [fixture.event.uuidString, user.uuidString])
        }
    }


    func testEveryLevelReadsTheEventOutsidersNothing() throws {
        XCTAssertEqual(try visibleMessages(fixture.staff), 1)
        XCTAssertEqual(try visibleMessages(fixture.admin), 1)
        XCTAssertEqual(try visibleMessages(fixture.owner), 1)
        XCTAssertEqual(try visibleMessages(fixture.outsider), 0)
        XCTAssertEqual(try asUser(fixture.outsider) { try $0.query("SELECT count(*) FROM events").int(0, 0) }, 0)
        XCTAssertEqual(try asUser(fixture.outsider) { try $0.query("SELECT count(*) FROM event_access").int(0, 0) }, 0)
        XCTAssertEqual(try asUser(fixture.staff) { try $0.query("SELECT count(*) FROM events").int(0, 0) }, 1)
    }

    func testOnlyAdminsAndOwnersSendAndOnlyAsThemselves() throws {
        try insertMessage(fixture.admin)
        try insertMessage(fixture.owner)
        assertRLSRefuses { try insertMessage(fixture.staff) }
        assertRLSRefuses { try insertMessage(fixture.outsider) }
        // An admin cannot send in someone else's name.
        assertRLSRefuses {
            _ = try asUser(fixture.admin) {
                try $0.query("""
                    INSERT INTO staff_messages (event_id, sender_id, message, message_type, priority)
                    VALUES ($1, $2, 'forged', 'broadcast', 'normal')
                    """, [fixture.event.uuidString, fixture.owner.uuidString])
            }
        }
        XCTAssertEqual(fixture.messageCount, 3)
    }

    func testAnyLevelMarksReadButOnlyForThemselvesAndNothingElse() throws {
        let updated = try asUser(fixture.staff) {
            try $0.query("""
                UPDATE staff_messages SET read_by = array_append(read_by, $1::uuid), read_count = read_count + 1
                WHERE id = $2
                """, [fixture.staff.uuidString, message.id.uuidString]).affectedRows
        }
        XCTAssertEqual(updated, 1)
        // Marking someone else read, oneself twice, a wrong count, or changing the text: refused.
        assertRLSRefuses {
            _ = try asUser(fixture.staff) {
                try $0.query("UPDATE staff_messages SET read_by = array_append(read_by, $1::uuid), read_count = read_count + 1 WHERE id = $2",
                             [fixture.admin.uuidString, message.id.uuidString])
            }
        }
        assertRLSRefuses {
            _ = try asUser(fixture.staff) {
                try $0.query("UPDATE staff_messages SET read_by = array_append(read_by, $1::uuid), read_count = read_count + 1 WHERE id = $2",
                             [fixture.staff.uuidString, message.id.uuidString])
            }
        }
        assertRLSRefuses {
            _ = try asUser(fixture.admin) {
                try $0.query("UPDATE staff_messages SET read_count = 1000 WHERE id = $1", [message.id.uuidString])
            }
        }
        // Changing the text is an edit: the event's admins' and owners' right (docs/protocol.md, edit and retract;
        // sql/008; EditRetractTests), never staff's.
        assertRLSRefuses {
            _ = try asUser(fixture.staff) {
                try $0.query("UPDATE staff_messages SET message = 'changed' WHERE id = $1", [message.id.uuidString])
            }
        }
        // An outsider's update touches no row at all.
        let outsiderUpdated = try asUser(fixture.outsider) {
            try $0.query("UPDATE staff_messages SET read_by = array_append(read_by, $1::uuid) WHERE id = $2",
                         [fixture.outsider.uuidString, message.id.uuidString]).affectedRows
        }
        XCTAssertEqual(outsiderUpdated, 0)
    }

    /// message_reads (sql/005): one marks only oneself, on a message of one's event, under its
    /// own event; one sees one's own reads, admins and owners see the event's; receipts only
    /// for admins and owners.
    func testReadStateIsWrittenOnlyByTheReaderAndSeenByTheEventsAdmins() throws {
        func mark(_ user: UUID, as reader: UUID, event: UUID) throws {
            _ = try asUser(user) {
                try $0.query("INSERT INTO message_reads (message_id, user_id, event_id) VALUES ($1, $2, $3)",
                             [message.id.uuidString, reader.uuidString, event.uuidString])
            }
        }
        try mark(fixture.staff, as: fixture.staff, event: fixture.event)
        assertRLSRefuses { try mark(fixture.staff, as: fixture.admin, event: fixture.event) }
        assertRLSRefuses { try mark(fixture.outsider, as: fixture.outsider, event: fixture.event) }
        let other = try fixture.store.createEvent(name: "Other", startsAt: nil)
        try fixture.store.grant(event: other, user: fixture.admin, level: .staff)
        assertRLSRefuses { try mark(fixture.admin, as: fixture.admin, event: other) }
        try mark(fixture.admin, as: fixture.admin, event: fixture.event)

        let count = "SELECT count(*) FROM message_reads"
        XCTAssertEqual(try asUser(fixture.staff) { try $0.query(count).int(0, 0) }, 1, "staff see only their own read")
        XCTAssertEqual(try asUser(fixture.admin) { try $0.query(count).int(0, 0) }, 2)
        XCTAssertEqual(try asUser(fixture.outsider) { try $0.query(count).int(0, 0) }, 0)
        let receipts = "SELECT count(*) FROM staffcast_receipts($1)"
        XCTAssertEqual(try asUser(fixture.staff) { try $0.query(receipts, [message.id.uuidString]).int(0, 0) }, 0)
        XCTAssertEqual(try asUser(fixture.outsider) { try $0.query(receipts, [message.id.uuidString]).int(0, 0) }, 0)
        XCTAssertEqual(try asUser(fixture.owner) { try $0.query(receipts, [message.id.uuidString]).int(0, 0) }, 2,
                       "the roster but the sender (the owner sent it): admin and staff")
        XCTAssertEqual(try asUser(fixture.staff) {
            try $0.query("SELECT staffcast_unread_count($1, $2)", [fixture.staff.uuidString, fixture.event.uuidString]).int(0, 0)
        }, 0)
        XCTAssertEqual(try asUser(fixture.outsider) {
            try $0.query("SELECT staffcast_unread_count($1, $2)", [fixture.staff.uuidString, fixture.event.uuidString]).int(0, 0)
        }, 0, "an outsider counts nothing of an event they cannot see")
    }

    func testNotificationsAreReadAndMarkedOnlyByTheirUser() throws {
        let n = try fixture.store.createNotification(as: fixture.admin,
            NotificationRequest(userID: fixture.staff, type: "t", title: "T", message: "M", data: nil))
        XCTAssertEqual(try asUser(fixture.staff) { try $0.query("SELECT count(*) FROM notifications").int(0, 0) }, 1)
        XCTAssertEqual(try asUser(fixture.admin) { try $0.query("SELECT count(*) FROM notifications").int(0, 0) }, 0)
        XCTAssertEqual(try asUser(fixture.outsider) { try $0.query("SELECT count(*) FROM notifications").int(0, 0) }, 0)
        let marked = try asUser(fixture.admin) {
            try $0.query("UPDATE notifications SET read = true WHERE id = $1", [n.id.uuidString]).affectedRows
        }
        XCTAssertEqual(marked, 0)
        XCTAssertEqual(try asUser(fixture.staff) {
            try $0.query("UPDATE notifications SET read = true, read_at = now() WHERE id = $1", [n.id.uuidString]).affectedRows
        }, 1)
    }

    func testOnlyAdminsAndOwnersNotifyUsersOfTheirEvents() throws {
        func notify(_ sender: UUID, _ target: UUID) throws {
            _ = try asUser(sender) {
                try $0.query("INSERT INTO notifications (user_id, sender_id, type, title, message) VALUES ($1, $2, 't', 'T', 'M')",
                             [target.uuidString, sender.uuidString])
            }
        }
        try notify(fixture.admin, fixture.staff)
        try notify(fixture.owner, fixture.staff)
        assertRLSRefuses { try notify(fixture.staff, fixture.admin) }
        assertRLSRefuses { try notify(fixture.admin, fixture.outsider) }
        assertRLSRefuses { try notify(fixture.outsider, fixture.staff) }
    }

    func testGrantsRevokesAndTokenIssuesAreAudited() throws {
        try fixture.store.revoke(event: fixture.event, user: fixture.staff, actor: "alice")
        _ = try fixture.store.issueToken(user: fixture.staff, label: "scanner 7", actor: "bob")
        // (setUp's send is audited too, as message_send: sql/007.)
        let log = Array(try fixture.store.auditLog(limit: 10).filter { $0.action != "message_send" }.prefix(3))
        XCTAssertEqual(log.map(\.action), ["token_issue", "revoke", "token_issue"])
        XCTAssertEqual(log[0].actor, "bob")
        XCTAssertEqual(log[0].detail, "scanner 7")
        XCTAssertEqual(log[1].actor, "alice")
        XCTAssertEqual(log[1].eventID, fixture.event.uuidString.lowercased())
        XCTAssertEqual(try fixture.count("SELECT count(*) FROM audit_log WHERE action = 'grant'"), 3)
    }

    func testTokensAreStoredOnlyAsHashes() throws {
        let token = try fixture.store.issueToken(user: fixture.staff)
        let stored = try fixture.count("SELECT count(*) FROM api_tokens WHERE encode(token_hash, 'escape') LIKE '%' || $1 || '%'", [token])
        XCTAssertEqual(stored, 0)
        XCTAssertEqual(try fixture.store.authenticate(token: token)?.userID, fixture.staff)
        XCTAssertNil(try fixture.store.authenticate(token: token + "x"))
        // The app role cannot read tokens at all.
        XCTAssertThrowsError(try asUser(fixture.owner) { try $0.query("SELECT count(*) FROM api_tokens") })
    }
}
