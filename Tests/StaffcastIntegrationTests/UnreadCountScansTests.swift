import Foundation
import StaffcastCore
import StaffcastPostgres
import XCTest

/// A batch of read marks, or of subscribes, answers each reader's unread count. The parts of
/// that count that depend on the whole event (its messages to everyone, and each reader's own
/// sends) are counted once for the batch: counted per reader, each was a scan of the event's
/// messages once the planner knew the event was large, and a read storm of 937 marks on a
/// 50,000-message log took 16.5 s. Counted by the rows of `staff_messages` read (sequentially,
/// and through its event indexes) on this test's own connection, so no timing is involved: the
/// event read about once for the batch, not once per reader. (Rows, not scans: probing the
/// (event, sender) index for each reader's own sends is one cheap scan per reader.)
final class UnreadCountScansTests: AccessRulesTestCase {
    func testAReadBatchAndASubscribeBatchScanTheEventOnceNotOncePerReader() throws {
        let readers = 300
        let loader = try PGConnection(conninfo: fixture.conninfo)
        _ = try loader.query("""
            INSERT INTO staff_messages (event_id, sender_id, message, message_type, priority)
            SELECT $1, $2, 'Update ' || g, 'broadcast', 'normal' FROM generate_series(1, 20000) g
            """, [fixture.event.uuidString, fixture.owner.uuidString])
        let staff = try loader.query("""
            WITH p AS (INSERT INTO profiles (id, display_name)
                       SELECT gen_random_uuid(), 'Reader ' || g FROM generate_series(1, \(readers)) g RETURNING id)
            INSERT INTO event_access (event_id, user_id, access_level) SELECT $1, id, 'staff' FROM p RETURNING user_id
            """, [fixture.event.uuidString])
        let users = (0..<staff.rowCount).compactMap { staff.uuid($0, 0) }
        XCTAssertEqual(users.count, readers)
        _ = try loader.query("ANALYZE staff_messages")
        let emergency = try fixture.store.send(as: fixture.owner, SendRequest(eventID: fixture.event, message: "Evacuate hall B",
                                                                             messageType: "emergency", priority: "urgent"))

        let store = Store(conn)
        // Rows of staff_messages read by this session, sequentially or through its event
        // indexes: reported ones and those not reported yet.
        func eventRowsRead() throws -> Int64 {
            try conn.query("""
                SELECT sum(pg_stat_get_tuples_returned(c.oid) + pg_stat_get_xact_tuples_returned(c.oid))::int8 FROM pg_class c
                WHERE c.oid IN ('staff_messages'::regclass, 'staff_messages_event_seq'::regclass,
                                'staff_messages_event_sender'::regclass, 'staff_messages_event_sent'::regclass)
                """).int64(0, 0) ?? -1
        }

        // A few reads of the event (its total, the marks), 80,000 rows here; once per reader
        // would be 300 × 20,000 = 6,000,000.
        var before = try eventRowsRead()
        let marked = try store.markReadBatch(users.map { Store.PendingRead(user: $0, message: emergency.id) })
        XCTAssertEqual(marked.compactMap { $0?.unreadCount }, Array(repeating: 20000, count: readers))
        var read = try eventRowsRead() - before
        XCTAssertLessThan(read, 200_000, "the read batch read \(read) rows of the 20,000-message event: once per reader")

        before = try eventRowsRead()
        let subscribed = try store.subscribeBatch(event: fixture.event, users.map { .init(user: $0, sinceSeq: nil) })
        XCTAssertEqual(subscribed.entries.map(\.unreadCount), Array(repeating: 20000, count: readers))
        read = try eventRowsRead() - before
        XCTAssertLessThan(read, 200_000, "the subscribe batch read \(read) rows of the 20,000-message event: once per subscriber")
    }

    /// The same batches count a reader's own sends the way `staffcast_unread_count` (sql/011)
    /// does: their unexpired messages are not unread to them, a retracted or expired one is
    /// in no count at all.
    func testAReadersOwnSendsAreCountedAsTheSQLFunctionCountsThem() throws {
        for text in ["Own 1", "Own retracted", "Own expired"] {
            _ = try fixture.store.send(as: fixture.admin, SendRequest(eventID: fixture.event, message: text))
        }
        for text in ["Owner 1", "Owner 2"] {
            _ = try fixture.store.send(as: fixture.owner, SendRequest(eventID: fixture.event, message: text))
        }
        let loader = try PGConnection(conninfo: fixture.conninfo)
        _ = try loader.query("UPDATE staff_messages SET retracted_at = now() WHERE message = 'Own retracted'")
        _ = try loader.query("UPDATE staff_messages SET expires_at = now() - interval '1 minute' WHERE message = 'Own expired'")
        let emergency = try fixture.store.send(as: fixture.owner, SendRequest(eventID: fixture.event, message: "Evacuate hall B",
                                                                             messageType: "emergency", priority: "urgent"))
        let readers = [fixture.admin, fixture.staff]
        let store = Store(conn)
        let marked = try store.markReadBatch(readers.map { Store.PendingRead(user: $0, message: emergency.id) })
        let subscribed = try store.subscribeBatch(event: fixture.event, readers.map { .init(user: $0, sinceSeq: nil) })
        // Four unexpired messages to everyone (two of the owner's, the emergency, the admin's first):
        // the admin sent one of them and read the emergency, the staff member read the emergency.
        XCTAssertEqual(marked.map { $0?.unreadCount }, [2, 3])
        XCTAssertEqual(subscribed.entries.map(\.unreadCount), [2, 3])
        for (i, reader) in readers.enumerated() {
            let sql = try loader.query("SELECT staffcast_unread_count($1, $2)", [reader.uuidString, fixture.event.uuidString]).int(0, 0)
            XCTAssertEqual(sql, marked[i]?.unreadCount, "reader \(i)")
        }
    }
}
