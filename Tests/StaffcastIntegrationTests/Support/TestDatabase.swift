import Crypto
import Foundation
import Logging
import StaffcastCore
import StaffcastPostgres
import XCTest

/// A real PostgreSQL for the tests: staffcast's own embedded cluster under
/// `.build/test-cluster` (started on first use, left running for the next test; `make test`
/// stops it at the end), and a fresh database per test, migrated from `sql/`.
enum TestDatabase {
    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let sqlDirectory = packageRoot.appendingPathComponent("sql")
    static let logger: Logger = {
        var l = Logger(label: "test")
        l.logLevel = ProcessInfo.processInfo.environment["STAFFCAST_TEST_LOG"] == "1" ? .debug : .critical
        return l
    }()

    nonisolated(unsafe) private static var clusterStorage: EmbeddedCluster?
    private static let lock = NSLock()

    /// The running test cluster (starting it when needed). A failure here fails the test: a
    /// database test never skips.
    static func cluster() throws -> EmbeddedCluster {
        lock.lock()
        defer { lock.unlock() }
        if let c = clusterStorage { return c }
        let dir = ProcessInfo.processInfo.environment["STAFFCAST_TEST_DATA_DIR"]
            ?? packageRoot.appendingPathComponent(".build/test-cluster").path
        let c = try EmbeddedCluster(dataDir: dir)
        try acrossProcesses(dir) {
            try c.ensureRunning(detached: true)
            try tuneForTests(c)
        }
        clusterStorage = c
        return c
    }

    /// Runs `body` while no other test process (`swift test --parallel` runs several) runs its
    /// own: starting and tuning the cluster, making the template. Waits at most 5 minutes.
    private static func acrossProcesses<T>(_ dir: String, _ body: () throws -> T) throws -> T {
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let fd = open(dir + "/test-setup.lock", O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw PostgresError(.cluster, "cannot open \(dir)/test-setup.lock") }
        defer { close(fd) } // closing lets go of the lock
        let deadline = Date().addingTimeInterval(300)
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            guard Date() < deadline else { throw PostgresError(.cluster, "another test process held \(dir)/test-setup.lock for 5 minutes") }
            usleep(50_000) // another process holds the lock: flock has no wait with a deadline
        }
        return try body()
    }

    /// Room for the whole run's connections. XCTest keeps every test case object until the run
    /// ends, so each fixture's connection stays open: with ~400 tests the embedded cluster's 200
    /// slots ran out near the end of the run ("remaining connection slots are reserved").
    static let testMaxConnections = 1_000

    /// The shared test cluster is never crashed on purpose (the fault tests make clusters of
    /// their own) and holds nothing worth keeping: it need not wait for the disk at each commit
    /// (`fsync`, `synchronous_commit`, `full_page_writes` off), which on a busy machine was a
    /// good part of each test's time.
    static let testSettings = ["max_connections": "\(testMaxConnections)", "fsync": "off",
                               "synchronous_commit": "off", "full_page_writes": "off"]

    private static func tuneForTests(_ c: EmbeddedCluster) throws {
        let admin = try PGConnection(conninfo: c.conninfo(database: "postgres"))
        var changed = false
        for (name, value) in testSettings.sorted(by: { $0.key < $1.key })
        where try admin.query("SELECT current_setting($1)", [name]).string(0, 0) != value {
            try admin.execute("ALTER SYSTEM SET \(name) = '\(value)'")
            changed = true
        }
        guard changed else { return }
        try c.stop()
        try c.ensureRunning(detached: true)
    }

    /// Drops a test's database once the test is over (its connections closed by force), so the
    /// cluster does not grow by a database for every test of every run.
    static func drop(_ conninfo: String) {
        guard let found = conninfo.firstMatch(of: #/dbname='(t_[0-9a-f]+)'/#), let c = try? cluster(),
              let admin = try? PGConnection(conninfo: c.conninfo(database: "postgres")) else { return }
        _ = try? admin.execute("DROP DATABASE IF EXISTS \(found.1) WITH (FORCE)")
    }

    static func migrations() throws -> [Migration] { try Migration.load(from: sqlDirectory) }

    /// Creates an empty database and returns its conninfo (not migrated).
    static func createEmpty() throws -> String {
        let c = try cluster()
        let name = "t_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(20)
        let admin = try PGConnection(conninfo: c.conninfo(database: "postgres"))
        try admin.execute("CREATE DATABASE \(name)")
        return c.conninfo(database: String(name))
    }

    /// The same database as the server's own login (`staffcast_server`, sql/006_roles.sql)
    /// instead of the cluster's superuser.
    static func serverLogin(_ ownerConninfo: String) -> String {
        ownerConninfo.replacingOccurrences(of: "user=\(EmbeddedCluster.superuser) ", with: "user=\(EmbeddedCluster.serverLogin) ")
    }

    /// A fresh, migrated database: a copy of the migrated template (`CREATE DATABASE … TEMPLATE`,
    /// a file copy inside PostgreSQL) instead of running every migration again for each test.
    static func create() throws -> String {
        let c = try cluster()
        let template = try migratedTemplate()
        let name = "t_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(20)
        let admin = try PGConnection(conninfo: c.conninfo(database: "postgres"))
        try admin.execute("CREATE DATABASE \(name) TEMPLATE \(template)")
        return c.conninfo(database: String(name))
    }

    nonisolated(unsafe) private static var templateName: String?

    /// The template every test database is copied from: migrated once per run, named after a
    /// digest of the migrations so that a changed `sql/` makes a new one (the cluster outlives
    /// runs). Nobody stays connected to it: PostgreSQL copies only an unused template.
    private static func migratedTemplate() throws -> String {
        let c = try cluster()
        lock.lock()
        defer { lock.unlock() }
        if let t = templateName { return t }
        let all = try migrations()
        let digest = SHA256.hash(data: Data(all.map { "\($0.version)\n\($0.sql)" }.joined(separator: "\u{0}").utf8))
        let name = "template_" + digest.prefix(10).map { String(format: "%02x", $0) }.joined()
        try acrossProcesses(c.dataDir.path) { try makeTemplate(c, name, all) }
        templateName = name
        return name
    }

    private static func makeTemplate(_ c: EmbeddedCluster, _ name: String, _ all: [Migration]) throws {
        let admin = try PGConnection(conninfo: c.conninfo(database: "postgres"))
        let exists = try admin.query("SELECT count(*) FROM pg_database WHERE datname = $1 AND datistemplate", [name]).int(0, 0) ?? 0
        if exists == 0 {
            // A half-made one (a run killed mid-migration) is dropped and made again.
            try admin.execute("DROP DATABASE IF EXISTS \(name)")
            let building = name + "_new"
            try admin.execute("DROP DATABASE IF EXISTS \(building)")
            try admin.execute("CREATE DATABASE \(building)")
            do {
                let conn = try PGConnection(conninfo: c.conninfo(database: building))
                try Migrator(migrations: all, logger: logger).migrate(conn)
            }
            try admin.execute("ALTER DATABASE \(building) RENAME TO \(name)")
            try admin.execute("ALTER DATABASE \(name) WITH IS_TEMPLATE true ALLOW_CONNECTIONS false")
        }
    }
}

/// Events, users, grants and tokens for one test, made through the real store.
struct Fixture {
    let conninfo: String
    let store: Store
    let event: UUID
    let owner: UUID, admin: UUID, staff: UUID, outsider: UUID
    let ownerToken: String, adminToken: String, staffToken: String, outsiderToken: String

    init(conninfo: String) throws {
        self.conninfo = conninfo
        store = Store(try PGConnection(conninfo: conninfo))
        event = try store.createEvent(name: "Summer Festival", startsAt: nil)
        owner = try store.createUser(name: "Olivia Owner")
        admin = try store.createUser(name: "Adam Admin")
        staff = try store.createUser(name: "Sam Staff")
        outsider = try store.createUser(name: "Oscar Outsider")
        try store.grant(event: event, user: owner, level: .owner)
        try store.grant(event: event, user: admin, level: .admin)
        try store.grant(event: event, user: staff, level: .staff)
        ownerToken = try store.issueToken(user: owner)
        adminToken = try store.issueToken(user: admin)
        staffToken = try store.issueToken(user: staff)
        outsiderToken = try store.issueToken(user: outsider)
    }

    /// One more person with `level` on `event` (the fixture's by default), and a token of theirs.
    func person(_ name: String, email: String? = nil, level: AccessLevel = .staff, event: UUID? = nil) throws
        -> (id: UUID, token: String) {
        let id = try store.createUser(name: name, email: email)
        try store.grant(event: event ?? self.event, user: id, level: level)
        return (id, try store.issueToken(user: id))
    }

    func count(_ sql: String, _ params: [String?] = []) throws -> Int {
        try store.conn.query(sql, params).int(0, 0) ?? -1
    }

    var messageCount: Int { (try? count("SELECT count(*) FROM staff_messages")) ?? -1 }

    /// Makes message `id` expired a minute ago.
    func expire(_ id: UUID) throws {
        try store.conn.execute("UPDATE staff_messages SET expires_at = now() - interval '1 minute' WHERE id = '\(id.uuidString)'")
    }
}
