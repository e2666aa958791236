import Foundation
import StaffcastCore
import StaffcastPostgres
import XCTest

/// sql/015: the double-send guard keeps one plan for the whole session, made at its first call.
/// That plan must not go stale: made while `staff_messages` is empty, it still probes the
/// duplicate key (one index scan) once the log has grown, never an event-wide index (the
/// trap sql/013 describes: every message of the event read per probe). Counted with the
/// transaction's own statistics (`pg_stat_get_xact_numscans`), so no timing is involved.
final class SendPlansTests: AccessRulesTestCase {
    struct GuardRun: Equatable {
        var duplicate: Bool
        var keyScans: Int64
        var eventIndexScans: Int64
    }

    /// One call of the guard as the owner, in a transaction of its own, on this test's one
    /// connection (one session: the plan of the first call is the plan of every call).
    func runGuard(_ text: String) throws -> GuardRun {
        try asUser(fixture.owner) { c in
            // Counts of this session not yet reported: read before and after, in one transaction.
            func scans() throws -> (key: Int64, event: Int64) {
                let r = try c.query("""
                    SELECT pg_stat_get_xact_numscans('staff_messages_duplicate_key'::regclass),
                           pg_stat_get_xact_numscans('staff_messages_event_sender'::regclass)
                           + pg_stat_get_xact_numscans('staff_messages_event_seq'::regclass)
                           + pg_stat_get_xact_numscans('staff_messages_event_sent'::regclass)
                    """)
                return (r.int64(0, 0) ?? -1, r.int64(0, 1) ?? -1)
            }
            let before = try scans()
            let duplicate = try c.query("""
                SELECT cardinality(staffcast_duplicate_ords(ARRAY[1], ARRAY[$1::uuid], ARRAY[$2], 10, NULL)) > 0
                """, [fixture.event.uuidString, text]).bool(0, 0)
            let after = try scans()
            return GuardRun(duplicate: duplicate ?? false, keyScans: after.key - before.key,
                            eventIndexScans: after.event - before.event)
        }
    }

    func testTheGuardPlannedOnAnEmptyLogStillProbesOnlyTheDuplicateKeyOnceTheLogHasGrown() throws {
        XCTAssertEqual(fixture.messageCount, 0)
        // No statistics change under the test: an ANALYZE would make the session plan again.
        _ = try conn.query("ALTER TABLE staff_messages SET (autovacuum_enabled = false)")
        XCTAssertEqual(try runGuard("Gates open in 15 minutes"), GuardRun(duplicate: false, keyScans: 1, eventIndexScans: 0))

        // The log grows by 3,000 messages of the event (as the test cluster's superuser), in
        // another session: the guard's session keeps its plan.
        let loader = try PGConnection(conninfo: fixture.conninfo)
        _ = try loader.query("""
            INSERT INTO staff_messages (event_id, sender_id, message, message_type, priority)
            SELECT $1, $2, 'Update ' || g, 'broadcast', 'normal' FROM generate_series(1, 3000) g
            """, [fixture.event.uuidString, fixture.owner.uuidString])
        XCTAssertEqual(fixture.messageCount, 3000)

        XCTAssertEqual(try runGuard("Update 1500"), GuardRun(duplicate: true, keyScans: 1, eventIndexScans: 0))
        XCTAssertEqual(try runGuard("Gates open in 15 minutes"), GuardRun(duplicate: false, keyScans: 1, eventIndexScans: 0))
    }

    /// The access check (a PL/pgSQL function since sql/015, called by the row-level-security
    /// policies) keeps its plan for the session too. Made while `event_access` held a handful of
    /// rows and had been analysed, that plan must still be one index probe (the primary key, or
    /// the user's rows) once the table holds thousands, never a sequential scan of it (found in
    /// review: 19 ms a call at 200,000 rows).
    func testTheAccessCheckPlannedOnASmallTableStillProbesAnIndexOnceTheTableHasGrown() throws {
        _ = try conn.query("ALTER TABLE event_access SET (autovacuum_enabled = false)")
        _ = try conn.query("ANALYZE event_access")
        func check() throws -> (access: Bool, indexScans: Int64, sequentialScans: Int64) {
            try asUser(fixture.staff) { c in
                func scans() throws -> (key: Int64, sequential: Int64) {
                    let r = try c.query("""
                        SELECT pg_stat_get_xact_numscans('event_access_pkey'::regclass)
                               + pg_stat_get_xact_numscans('event_access_user'::regclass),
                               pg_stat_get_xact_numscans('event_access'::regclass)
                        """)
                    return (r.int64(0, 0) ?? -1, r.int64(0, 1) ?? -1)
                }
                let before = try scans()
                let access = try c.query("SELECT staffcast_has_access($1::uuid, ARRAY['staff','admin','owner'])",
                                         [fixture.event.uuidString]).bool(0, 0)
                let after = try scans()
                return (access ?? false, after.key - before.key, after.sequential - before.sequential)
            }
        }
        // More calls than PL/pgSQL makes custom plans before it settles on one (five).
        for _ in 0..<7 {
            let small = try check()
            XCTAssertTrue(small.access)
        }
        let loader = try PGConnection(conninfo: fixture.conninfo)
        _ = try loader.query("""
            WITH p AS (INSERT INTO profiles (id, display_name)
                       SELECT gen_random_uuid(), 'Staff ' || g FROM generate_series(1, 20000) g RETURNING id)
            INSERT INTO event_access (event_id, user_id, access_level) SELECT $1, id, 'staff' FROM p
            """, [fixture.event.uuidString])
        let grown = try check()
        XCTAssertTrue(grown.access)
        XCTAssertEqual(grown.indexScans, 1)
        XCTAssertEqual(grown.sequentialScans, 0)
    }
}
