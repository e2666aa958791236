import Foundation
import StaffcastCore
import StaffcastPostgres
import XCTest

/// The change feed under backlog (issue 8 §4): access and token changes are applied before
/// messages, so a message committed after a revoke must never be handed on in a read that does
/// not also hold the revoke — even when more access changes are pending than one read takes.
final class ChangeFeedBacklogTests: IntegrationTestCase {
    func testAMessageAfterARevokeIsNeverReadBeforeTheRevokeBehindABacklog() throws {
        let conn = try PGConnection(conninfo: fixture.conninfo)
        let store = Store(conn)
        var cursors = try store.currentCursors()
        // A backlog larger than one read of the log: 1,100 grants on another event.
        let other = try store.createEvent(name: "Other", startsAt: nil)
        try conn.query("""
            INSERT INTO profiles (id, display_name) SELECT gen_random_uuid(), 'filler ' || g FROM generate_series(1, 1100) g
            """)
        try conn.query("""
            INSERT INTO event_access (event_id, user_id, access_level)
            SELECT $1, id, 'staff' FROM profiles WHERE display_name LIKE 'filler %'
            """, [other.uuidString])
        // Then the revoke, then a message committed after it.
        XCTAssertTrue(try store.revoke(event: fixture.event, user: fixture.staff))
        let message = try store.send(as: fixture.owner, SendRequest(eventID: fixture.event, message: "after the revoke"))

        var revokeApplied = false
        var delivered = false
        for _ in 0..<10 {
            let batch = try store.changes(after: cursors, limit: 1_000)
            if batch.access.contains(where: { $0.userID == fixture.staff && $0.eventID == fixture.event && $0.level == nil }) {
                revokeApplied = true
            }
            if batch.messages.contains(where: { $0.id == message.id }) {
                XCTAssertTrue(revokeApplied, "the message was read before the revoke committed ahead of it")
                delivered = true
            }
            cursors = batch.cursors
            if !batch.hasMore { break }
        }
        XCTAssertTrue(revokeApplied)
        XCTAssertTrue(delivered, "the message is read once the backlog is through")
        XCTAssertTrue(try store.changes(after: cursors).isEmpty, "nothing twice")
    }
}
