import Foundation
@testable import StaffcastPostgres
import XCTest

final class MigrationTests: XCTestCase {
    /// What an upgrade test starts from: a new database migrated through `version` only, with
    /// one event and one person in it.
    struct OlderDatabase {
        let conninfo: String
        let conn: PGConnection
        let all: [Migration]
        let event: UUID
        let sender: UUID
    }

    func databaseMigrated(through version: Int) throws -> OlderDatabase {
        let conninfo = try makeTestDatabase(migrated: false)
        let conn = try PGConnection(conninfo: conninfo)
        let all = try TestDatabase.migrations()
        XCTAssertEqual(try Migrator(migrations: all.filter { $0.version <= version }, logger: TestDatabase.logger).migrate(conn).last, version)
        let (event, sender) = (UUID(), UUID())
        try conn.query("INSERT INTO events (id, name) VALUES ($1, 'E')", [event.uuidString])
        try conn.query("INSERT INTO profiles (id, display_name) VALUES ($1, 'P')", [sender.uuidString])
        return OlderDatabase(conninfo: conninfo, conn: conn, all: all, event: event, sender: sender)
    }

    func testMigrationsApplyOnceAndAreRecorded() throws {
        let conninfo = try makeTestDatabase(migrated: false)
        let all = try TestDatabase.migrations()
        let migrator = Migrator(migrations: all, logger: TestDatabase.logger)
        let conn = try PGConnection(conninfo: conninfo)
        XCTAssertEqual(all.prefix(4).map(\.version), [1, 2, 3, 4])
        XCTAssertEqual(try migrator.migrate(conn), all.map(\.version))
        XCTAssertEqual(try migrator.migrate(conn), [])
        XCTAssertEqual(try conn.query("SELECT count(*) FROM schema_migrations").int(0, 0), all.count)
        try migrator.verify(conn)
    }

    func testTwoMigratorsAtOnceBothSucceed() throws {
        let conninfo = try makeTestDatabase(migrated: false)
        let migrations = try TestDatabase.migrations()
        let errors = ErrorList()
        DispatchQueue.concurrentPerform(iterations: 3) { _ in
            do {
                try Migrator(migrations: migrations, logger: TestDatabase.logger).migrate(PGConnection(conninfo: conninfo))
            } catch {
                errors.add(error)
            }
        }
        XCTAssertTrue(errors.all.isEmpty, "\(errors.all)")
        XCTAssertEqual(try PGConnection(conninfo: conninfo).query("SELECT count(*) FROM schema_migrations").int(0, 0), migrations.count)
    }

    /// 005_read_state.sql on a database whose read_by arrays hold duplicates (the old
    /// mark_read could leave them): one read per person, read_count = distinct readers.
    func testReadStateMigrationFoldsOldReadByIntoOneReadPerPerson() throws {
        let old = try databaseMigrated(through: 4)
        let (conn, all, event, sender) = (old.conn, old.all, old.event, old.sender)
        let (a, b) = (UUID(), UUID())
        for u in [a, b] {
            try conn.query("INSERT INTO profiles (id, display_name) VALUES ($1, 'P')", [u.uuidString])
        }
        try conn.query("""
            INSERT INTO staff_messages (event_id, sender_id, message, message_type, priority, read_by)
            VALUES ($1, $2, 'old', 'broadcast', 'normal', ARRAY[$3, $3, $4, $3]::uuid[])
            """, [event.uuidString, sender.uuidString, a.uuidString, b.uuidString])
        _ = try Migrator(migrations: all, logger: TestDatabase.logger).migrate(conn)
        XCTAssertEqual(try conn.query("SELECT count(*) FROM message_reads").int(0, 0), 2)
        XCTAssertEqual(try conn.query("SELECT read_count, cardinality(read_by) FROM staff_messages").int(0, 0), 2)
        XCTAssertEqual(try conn.query("SELECT cardinality(read_by) FROM staff_messages").int(0, 0), 2)
    }

    /// 013_send_path.sql on a database whose outbox holds `fanout` rows: the cursor starts
    /// before the first message still pending, so nothing committed before the upgrade is
    /// skipped or expanded twice; the old rows are finished.
    func testSendPathMigrationStartsTheFanoutCursorAtTheFirstPendingMessage() throws {
        let old = try databaseMigrated(through: 12)
        let (conn, all, event, sender) = (old.conn, old.all, old.event, old.sender)
        for text in ["expanded", "pending 1", "pending 2"] {
            try conn.query("""
                INSERT INTO staff_messages (event_id, sender_id, message, message_type, priority)
                VALUES ($1, $2, $3, 'broadcast', 'normal')
                """, [event.uuidString, sender.uuidString, text])
        }
        // The first message's fanout row was already expanded (done) under 012.
        try conn.query("""
            UPDATE outbox SET status = 'done' WHERE kind = 'fanout'
              AND message_id = (SELECT id FROM staff_messages WHERE message = 'expanded')
            """)
        XCTAssertEqual(try Migrator(migrations: all, logger: TestDatabase.logger).migrate(conn), all.filter { $0.version > 12 }.map(\.version))
        let pending = try conn.query("""
            SELECT m.message FROM staff_messages m WHERE m.seq > (SELECT seq FROM fanout_cursor) ORDER BY m.seq
            """)
        XCTAssertEqual((0..<pending.rowCount).compactMap { pending.string($0, 0) }, ["pending 1", "pending 2"])
        XCTAssertEqual(try conn.query("SELECT count(*) FROM outbox WHERE kind = 'fanout' AND status = 'pending'").int(0, 0), 0)
        // A send after the upgrade adds no fanout row: the cursor covers it.
        try conn.query("""
            INSERT INTO staff_messages (event_id, sender_id, message, message_type, priority)
            VALUES ($1, $2, 'after', 'broadcast', 'normal')
            """, [event.uuidString, sender.uuidString])
        XCTAssertEqual(try conn.query("SELECT count(*) FROM outbox WHERE kind = 'fanout'").int(0, 0), 3)
    }

    /// 015_send_plans.sql during a rolling upgrade, while a server of the previous release still
    /// sends: its send batch reads staff_messages (the log positions, sql/014) before it
    /// inserts, and a mark of any release holds the table meanwhile. Building the new index
    /// under a share lock and then dropping the old one deadlocked with that send (found in
    /// review); the migration now takes the table's strongest lock first, so the send waits
    /// for it and both finish.
    func testSendPlansMigrationDuringAPreviousReleasesSendIsNoDeadlock() throws {
        let older = try databaseMigrated(through: 14)
        let (conninfo, setup, all) = (older.conninfo, older.conn, older.all)
        let (event, sender) = (older.event.uuidString, older.sender.uuidString)
        let insert = """
            INSERT INTO staff_messages (event_id, sender_id, message, message_type, priority)
            VALUES ($1, $2, $3, 'broadcast', 'normal')
            """
        try setup.query(insert, [event, sender, "before the upgrade"])
        // Backends of this database waiting for a lock (the migration, then the old send).
        func lockWaiters() throws -> Int {
            try setup.query("""
                SELECT count(*) FROM pg_stat_activity
                WHERE datname = current_database() AND wait_event_type = 'Lock'
                """).int(0, 0) ?? -1
        }

        // A mark in progress holds staff_messages (row exclusive) until it commits.
        let marker = try PGConnection(conninfo: conninfo)
        _ = try marker.execute("BEGIN")
        try marker.query("UPDATE staff_messages SET read_by = read_by WHERE event_id = $1", [event])

        let errors = ErrorList()
        let finished = DispatchGroup()
        // The upgraded server starts and migrates: it waits for the mark.
        finished.enter()
        Thread {
            defer { finished.leave() }
            do { _ = try Migrator(migrations: all, logger: TestDatabase.logger).migrate(PGConnection(conninfo: conninfo)) } catch { errors.add(error) }
        }.start()
        XCTAssertTrue(try waitUntil(20) { try lockWaiters() >= 1 }, "the migration did not wait for the mark")

        // A previous release's send batch: the gate and the log's lock, the positions, the insert.
        finished.enter()
        Thread {
            defer { finished.leave() }
            do {
                let old = try PGConnection(conninfo: conninfo)
                _ = try old.execute("BEGIN")
                try old.query("SELECT pg_advisory_xact_lock_shared(7354000, 0), pg_advisory_xact_lock(7354000, 1)")
                try old.query("SELECT messages_through, access_through, token_through FROM staffcast_log_positions()")
                try old.query(insert, [event, sender, "sent by the previous release"])
                _ = try old.execute("COMMIT")
            } catch {
                errors.add(error)
            }
        }.start()
        XCTAssertTrue(try waitUntil(20) { try lockWaiters() >= 2 }, "the old send did not wait")

        _ = try marker.execute("COMMIT")
        XCTAssertEqual(finished.wait(timeout: .now() + 60), .success, "the migration or the send did not finish")
        XCTAssertTrue(errors.all.isEmpty, "\(errors.all)")
        XCTAssertEqual(try setup.query("SELECT max(version) FROM schema_migrations").int(0, 0), all.last?.version)
        XCTAssertEqual(try setup.query("SELECT count(*) FROM staff_messages").int(0, 0), 2)
    }

    func testANewerSchemaIsRefused() throws {
        let conninfo = try makeTestDatabase()
        let conn = try PGConnection(conninfo: conninfo)
        try conn.query("INSERT INTO schema_migrations (version, name) VALUES (999, 'from_the_future')")
        let migrator = Migrator(migrations: try TestDatabase.migrations(), logger: TestDatabase.logger)
        XCTAssertThrowsError(try migrator.migrate(conn)) { error in
            XCTAssertTrue("\(error)".contains("newer"), "\(error)")
        }
        XCTAssertThrowsError(try migrator.verify(conn))
    }

    func testAFailedMigrationLeavesNothingBehind() throws {
        let conninfo = try makeTestDatabase(migrated: false)
        let conn = try PGConnection(conninfo: conninfo)
        let broken = [Migration(version: 1, name: "broken", sql: "CREATE TABLE half_done (id int); SELECT no_such_function();")]
        XCTAssertThrowsError(try Migrator(migrations: broken, logger: TestDatabase.logger).migrate(conn))
        XCTAssertEqual(try conn.query("SELECT to_regclass('half_done') IS NULL").bool(0, 0), true)
        XCTAssertEqual(try conn.query("SELECT count(*) FROM schema_migrations").int(0, 0), 0)
    }
}

final class ErrorList: @unchecked Sendable {
    private let lock = NSLock()
    private var errors: [Error] = []
    func add(_ e: Error) { lock.lock(); errors.append(e); lock.unlock() }
    var all: [Error] { lock.lock(); defer { lock.unlock() }; return errors }
}
