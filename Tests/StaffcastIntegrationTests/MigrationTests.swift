import Foundation
import StaffcastPostgres
import XCTest

final class MigrationTests: XCTestCase {
    func testMigrationsApplyOnceAndAreRecorded() throws {
        let conninfo = try TestDatabase.createEmpty()
        let migrator = Migrator(migrations: try TestDatabase.migrations(), logger: TestDatabase.logger)
        let conn = try PGConnection(conninfo: conninfo)
        XCTAssertEqual(try migrator.migrate(conn), [1, 2, 3, 4])
        XCTAssertEqual(try migrator.migrate(conn), [])
        XCTAssertEqual(try conn.query("SELECT count(*) FROM schema_migrations").int(0, 0), 4)
        try migrator.verify(conn)
    }

    func testTwoMigratorsAtOnceBothSucceed() throws {
        let conninfo = try TestDatabase.createEmpty()
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
        XCTAssertEqual(try PGConnection(conninfo: conninfo).query("SELECT count(*) FROM schema_migrations").int(0, 0), 4)
    }

    func testANewerSchemaIsRefused() throws {
        let conninfo = try TestDatabase.create()
        let conn = try PGConnection(conninfo: conninfo)
        try conn.query("INSERT INTO schema_migrations (version, name) VALUES (999, 'from_the_future')")
        let migrator = Migrator(migrations: try TestDatabase.migrations(), logger: TestDatabase.logger)
        XCTAssertThrowsError(try migrator.migrate(conn)) { error in
            XCTAssertTrue("\(error)".contains("newer"), "\(error)")
        }
        XCTAssertThrowsError(try migrator.verify(conn))
    }

    func testAFailedMigrationLeavesNothingBehind() throws {
        let conninfo = try TestDatabase.createEmpty()
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
