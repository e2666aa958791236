import Foundation
import StaffcastClient
import StaffcastPostgres
import XCTest

/// The footguns of an operator's first hour (issue 20), tried with the real binary: a port
/// already served, an admin command on a mistyped data dir, the binary run outside the
/// checkout, and an embedded PostgreSQL orphaned by `kill -9`.
final class FirstHourTests: XCTestCase {
    private func tempDir(_ prefix: String) -> URL {
        let url = URL(fileURLWithPath: "/tmp/\(prefix)-\(UUID().uuidString.prefix(8))")
        addTeardownBlock { try? FileManager.default.removeItem(at: url) }
        return url
    }

    func testSecondServeOnATakenPortExitsWithTheReason() throws {
        let conninfo = try makeTestDatabase()
        let first = try StaffcastProcess(["serve", "--listen", "127.0.0.1:0", "--database-url", TestDatabase.serverLogin(conninfo),
                                      "--log-level", "warning"])
        defer { first.stop() }
        let address = "127.0.0.1:\(first.port)"

        // Another staffcast (its own database) on the same port: refused, naming the port.
        let second = try StaffcastProcess(["serve", "--listen", address, "--database-url", TestDatabase.serverLogin(conninfo),
                                       "--log-level", "warning"], expectBanner: false)
        let status = second.wait(seconds: 60)
        if status == nil { second.kill9() }
        XCTAssertNotNil(status, "a second server must not start on a port that is served")
        XCTAssertNotEqual(status, 0)
        XCTAssertTrue(second.waitForStderr("\(address) is already in use"), second.stderr)
        XCTAssertEqual(second.stderr.split(separator: "\n").count, 1, second.stderr)

        // The first server still answers every request (nothing split the port).
        for _ in 0..<6 {
            XCTAssertEqual(try APIClient(server: "http://\(address)", token: nil).raw("GET", "/healthz").status, 200)
        }
    }

    func testAdminOnAMissingDataDirCreatesNothing() throws {
        let dir = tempDir("sc-nosuch")
        let r = try CommandLineTests.execute(["admin", "event", "create", "--name", "Typo Fest", "--data-dir", dir.path])
        XCTAssertNotEqual(r.status, 0)
        XCTAssertEqual(r.stdout, "", "no event id may be printed")
        let lines = r.stderr.split(separator: "\n")
        XCTAssertEqual(lines.count, 1, r.stderr)
        XCTAssertTrue(r.stderr.contains("no staffcast data in \(dir.path)"), r.stderr)
        XCTAssertTrue(r.stderr.contains("staffcast migrate --data-dir"), "says how to create it: \(r.stderr)")
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.path), "the data dir must not be created")
    }

    func testEmbeddedMigrationsAreExactlyTheSQLFolder() throws {
        let embedded = try Migration.embedded()
        let folder = try Migration.load(from: TestDatabase.sqlDirectory)
        let missing = Set(folder.map { "\(String(format: "%03d", $0.version))_\($0.name).sql" })
            .subtracting(embedded.map { "\(String(format: "%03d", $0.version))_\($0.name).sql" })
        XCTAssertEqual(missing, [], "add these sql/ files to Sources/StaffcastPostgres/Schema/EmbeddedMigrations.swift")
        XCTAssertEqual(embedded, folder, "the embedded migrations must equal sql/ byte for byte")
    }

    func testTheBinaryCopiedOutsideTheCheckoutServes() throws {
        let bin = tempDir("sc-bin"), cwd = tempDir("sc-cwd")
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: cwd, withIntermediateDirectories: true)
        let copy = bin.appendingPathComponent("staffcast")
        try FileManager.default.copyItem(atPath: CommandLineTests.binary, toPath: copy.path)
        // An empty database: the copy must migrate it from what it carries inside.
        let conninfo = try makeTestDatabase(migrated: false)
        // (The data dir holds the server's VAPID key even with a database URL: put it elsewhere.)
        let data = tempDir("sc-data")
        let serve = try StaffcastProcess(["serve", "--listen", "127.0.0.1:0", "--database-url", conninfo, "--data-dir", data.path,
                                          "--log-level", "warning"],
                                     binary: copy.path, cwd: cwd, unset: ["STAFFCAST_SQL_DIR"])
        defer { serve.stop() }
        XCTAssertEqual(try APIClient(server: "http://127.0.0.1:\(serve.port)", token: nil).raw("GET", "/healthz").status, 200)
        let version = try PGConnection(conninfo: conninfo).query("SELECT max(version) FROM schema_migrations").int(0, 0)
        XCTAssertEqual(version, try Migration.load(from: TestDatabase.sqlDirectory).map(\.version).max())
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: cwd.path), [], "nothing created in the cwd")
    }

    func testAnEmbeddedPostgresOrphanedByKill9IsSaidAndStartedAfresh() throws {
        let data = tempDir("sc-orphan")
        let args = ["serve", "--listen", "127.0.0.1:0", "--data-dir", data.path, "--log-level", "info"]
        let first = try StaffcastProcess(args)
        first.kill9()
        let cluster = try EmbeddedCluster(dataDir: data.path)
        XCTAssertTrue(cluster.isRunning, "kill -9 leaves the embedded PostgreSQL running")
        defer { try? cluster.stop() }

        let second = try StaffcastProcess(args)
        defer { second.stop() }
        XCTAssertTrue(second.waitForStderr("was left running by a staffcast that ended without stopping it"), second.stderr)
        XCTAssertEqual(second.stderr.components(separatedBy: "left running").count, 2, "said once: \(second.stderr)")
        XCTAssertEqual(try APIClient(server: "http://127.0.0.1:\(second.port)", token: nil).raw("GET", "/healthz").status, 200)

        // A clean stop stops PostgreSQL too; the next start has nothing to say about orphans.
        second.stop()
        XCTAssertFalse(cluster.isRunning)
        let third = try StaffcastProcess(args)
        defer { third.stop() }
        XCTAssertFalse(third.stderr.contains("left running"), third.stderr)
    }
}
