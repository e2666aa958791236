import Foundation
import StaffcastCore
import StaffcastPostgres
import XCTest

/// A `read` reply's `unread_count` is counted in a database snapshot. A message committed after
/// that snapshot, on another server, reaches the reader live before the reply: the reply says
/// which seq it counted through (`counted_through_seq`), and the client rule (`CountedUnread`)
/// keeps the message counted. Made deterministic: the read's commit waits (after its count) on
/// a lock the test holds, through a deferred trigger on message_reads, while the message is sent
/// on server B and delivered by server A. Before `counted_through_seq` a client could only take
/// the reply's 0: the badge went one low (4 of 18 trials of a black-box test with two servers).
final class ReadCountSnapshotTests: IntegrationTestCase {
    func testAMessageCommittedAfterTheMarksSnapshotButDeliveredFirstStaysCounted() throws {
        try checkHeldReply { k in ["op": "mark_read", "message_id": k.id.uuidString.lowercased(), "ref": "r"] }
    }

    func testTheSameForMarkAllRead() throws {
        try checkHeldReply { k in ["op": "mark_all_read", "event_id": k.eventID.uuidString.lowercased(), "through_seq": k.seq, "ref": "r"] }
    }

    /// `mark` (a request that marks K read) is held at its commit while M is sent and delivered.
    private func checkHeldReply(_ mark: (StaffMessage) -> [String: Any], file: StaticString = #filePath, line: UInt = #line) throws {
        let a = try startServer(), b = try startServer()
        let reader = try a.subscriber(fixture.staffToken, fixture.event)
        let sender = try b.connect(fixture.ownerToken)
        let event = fixture.event.uuidString.lowercased()
        guard case .message(let k) = try send(sender, reader, event, "Doors at six") else { return XCTFail(file: file, line: line) }

        let db = try PGConnection(conninfo: fixture.conninfo)
        _ = try db.execute("""
            CREATE FUNCTION test_hold_commit() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN PERFORM pg_advisory_xact_lock_shared(4242, 7); RETURN NULL; END $$;
            CREATE CONSTRAINT TRIGGER test_hold_commit AFTER INSERT ON message_reads
                DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION test_hold_commit();
            SELECT pg_advisory_lock(4242, 7);
            """)
        try reader.send(mark(k))
        // The mark's transaction has counted and now waits at its commit. (pg_locks shows every
        // database's locks: this class's other test, run at once by another worker, waits on the
        // same key in its own database.)
        XCTAssertTrue(try waitUntil(10) {
            try db.query("""
                SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND classid = 4242 AND objid = 7 AND NOT granted
                    AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
                """).int(0, 0) == 1
        }, "the mark never reached its commit", file: file, line: line)
        guard case .message(let m) = try send(sender, reader, event, "Gate 2 closed") else { return XCTFail(file: file, line: line) }
        _ = try db.query("SELECT pg_advisory_unlock(4242, 7)")

        let reply = try reader.expect("read", timeout: 10)
        let (unread, counted): (Int, Int64?)
        switch reply {
        case .read(let ref, let id, _, let u, let c): (unread, counted) = (u, c); XCTAssertEqual(ref, "r"); XCTAssertEqual(id, k.id)
        case .readAll(let ref, _, _, let marked, let u, let c): (unread, counted) = (u, c); XCTAssertEqual(ref, "r"); XCTAssertEqual(marked, 1)
        default: return XCTFail("\(reply)", file: file, line: line)
        }
        XCTAssertEqual(unread, 0, "the snapshot was taken before M was committed", file: file, line: line)
        let through = try XCTUnwrap(counted, "the reply says what it counted", file: file, line: line)
        XCTAssertEqual(through, k.seq, file: file, line: line)
        XCTAssertLessThan(through, m.seq, file: file, line: line)
        // What the reader holds: K (read now) and M (live, unread).
        var read = k
        read.read = true
        XCTAssertEqual(CountedUnread.count(reply: unread, countedThroughSeq: counted, held: [read, m], user: fixture.staff, now: Date()), 1,
                       "M stays counted", file: file, line: line)
        _ = try db.execute("DROP TRIGGER test_hold_commit ON message_reads")
        // The truth, from a fresh snapshot.
        XCTAssertEqual(try a.connect(fixture.staffToken).subscribe(fixture.event).unread, 1, file: file, line: line)
    }

    /// Sends `text` from `sender` (server B); the `message` frame `reader` (server A) gets.
    private func send(_ sender: TestSocket, _ reader: TestSocket, _ event: String, _ text: String) throws -> ServerFrame {
        try sender.send(["op": "send", "event_id": event, "message": text, "ref": text])
        _ = try sender.expect("sent")
        return try reader.expect("message", timeout: 10)
    }
}
