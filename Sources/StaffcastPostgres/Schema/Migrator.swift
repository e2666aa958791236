import Foundation
import Logging

/// Applies `sql/` migrations: in order, each in its own transaction, recorded in
/// `schema_migrations`, under an advisory lock so that two servers starting at once do not
/// race, and refusing a database whose schema is newer than the files it knows.
public struct Migrator {
    /// Key of the session advisory lock held while migrating (any constant unique to staffcast).
    static let lockKey = "7354000, 99"

    public let migrations: [Migration]
    public let logger: Logger

    public init(migrations: [Migration], logger: Logger) {
        self.migrations = migrations
        self.logger = logger
    }

    public var latestVersion: Int { migrations.map(\.version).max() ?? 0 }

    /// Brings the database up to `latestVersion`; returns the versions it applied.
    @discardableResult
    public func migrate(_ conn: PGConnection) throws -> [Int] {
        // Another server may be migrating (a migration may take up to an hour): wait longer.
        try conn.query("SELECT pg_advisory_lock(\(Self.lockKey))", timeout: 7_200)
        defer { _ = try? conn.query("SELECT pg_advisory_unlock(\(Self.lockKey))") }
        try conn.execute("""
            CREATE TABLE IF NOT EXISTS schema_migrations (
                version    integer PRIMARY KEY,
                name       text NOT NULL,
                applied_at timestamptz NOT NULL DEFAULT now())
            """)
        let applied = try appliedVersions(conn)
        try refuseNewer(applied)
        var done: [Int] = []
        for migration in migrations where !applied.contains(migration.version) {
            logger.info("applying migration", metadata: ["version": "\(migration.version)", "name": "\(migration.name)"])
            do {
                try conn.transaction { tx in
                    // A migration over a large table (an index build) may take long: an hour.
                    try tx.execute(migration.sql, timeout: 3_600)
                    try tx.query("INSERT INTO schema_migrations (version, name) VALUES ($1, $2)",
                                 [String(migration.version), migration.name])
                }
            } catch let error as PostgresError {
                throw PostgresError(.migration, "migration \(migration.version)_\(migration.name) failed: \(error.message)",
                                    sqlState: error.sqlState)
            }
            done.append(migration.version)
        }
        return done
    }

    /// Throws unless the database is exactly at `latestVersion` (for servers that must not migrate).
    public func verify(_ conn: PGConnection) throws {
        let exists = try conn.query("SELECT to_regclass('schema_migrations') IS NOT NULL").bool(0, 0) ?? false
        let applied = exists ? try appliedVersions(conn) : []
        try refuseNewer(applied)
        let missing = migrations.map(\.version).filter { !applied.contains($0) }
        if !missing.isEmpty {
            throw PostgresError(.migration, "the database lacks migrations \(missing); run `staffcast migrate`")
        }
    }

    private func appliedVersions(_ conn: PGConnection) throws -> Set<Int> {
        let rows = try conn.query("SELECT version FROM schema_migrations")
        return Set((0..<rows.rowCount).compactMap { rows.int($0, 0) })
    }

    private func refuseNewer(_ applied: Set<Int>) throws {
        if let newest = applied.max(), newest > latestVersion {
            throw PostgresError(.migration, "the database schema is at version \(newest), newer than this staffcast knows (\(latestVersion)); upgrade staffcast before using this database")
        }
    }
}
