import Foundation
import Logging

/// Which database a command uses: an external one by URL, or the embedded cluster under a data
/// dir (started on demand). `serve`, `migrate` and every `admin` command resolve it the same
/// way, so they always meet the same database.
public final class DatabaseTarget: @unchecked Sendable {
    /// The owner of the tables: migrations and `staffcast admin` connect with it (the embedded
    /// cluster's superuser, or `migrate_database_url`, else `database_url`).
    public let conninfo: String
    /// What `staffcast serve` serves with: the embedded cluster's `staffcast_server` login
    /// (sql/006_roles.sql), or `database_url`.
    public let serverConninfo: String
    public let cluster: EmbeddedCluster?
    /// True when this process started the embedded cluster.
    public let startedCluster: Bool
    /// The pid of an orphaned embedded PostgreSQL (left by a killed staffcast) that was stopped
    /// and started afresh before use.
    public let stoppedOrphan: Int32?
    /// Our shared lock on the data dir's `in-use` file, held while this process uses the
    /// embedded cluster (closed by `release`, or by the kernel when the process ends).
    private var inUseLock: Int32?

    /// `create: false` (admin commands) refuses a data dir without a cluster instead of making
    /// one there: a mistyped --data-dir must not become a new, empty staffcast.
    public init(databaseURL: String?, migrateDatabaseURL: String? = nil, dataDir: String,
                create: Bool = true) throws(PostgresError) {
        if let databaseURL, !databaseURL.isEmpty {
            serverConninfo = databaseURL
            conninfo = migrateDatabaseURL.flatMap { $0.isEmpty ? nil : $0 } ?? databaseURL
            cluster = nil
            startedCluster = false
            stoppedOrphan = nil
            inUseLock = nil
        } else {
            guard create || EmbeddedCluster.exists(dataDir: dataDir) else {
                throw PostgresError(.noData, "there is no staffcast data in \(dataDir) (no cluster there); create it with `staffcast migrate --data-dir \(dataDir)` or `staffcast serve --data-dir \(dataDir)`, or pass --create")
            }
            let cluster = try EmbeddedCluster(dataDir: dataDir)
            let outcome = try cluster.ensureRunning()
            startedCluster = outcome.started
            stoppedOrphan = outcome.stoppedOrphan
            inUseLock = outcome.inUseLock
            conninfo = cluster.conninfo
            serverConninfo = cluster.conninfo(database: EmbeddedCluster.databaseName, user: EmbeddedCluster.serverLogin)
            self.cluster = cluster
        }
    }

    /// Human description that never shows a password.
    public var displayName: String {
        if let cluster { return "embedded cluster at \(cluster.clusterDir.path)" }
        return Self.redacted(conninfo)
    }

    /// Stops the embedded cluster when no other staffcast server still uses it (or, with
    /// `onlyIfStartedHere`, only when this process started it: admin commands).
    public func release(onlyIfStartedHere: Bool, logger: Logger) {
        guard let cluster else { return }
        defer {
            if let fd = inUseLock { close(fd) }
            inUseLock = nil
        }
        if onlyIfStartedHere && !startedCluster { return }
        if let conn = try? PGConnection(conninfo: conninfo) {
            // This server's own connections were closed just before; their backends leave a
            // moment later (longer on a loaded machine), so only sessions that stay count.
            var others = 0
            let deadline = Date().addingTimeInterval(2)
            repeat {
                others = (try? conn.query("""
                    SELECT count(*) FROM pg_stat_activity WHERE application_name = 'staffcast serve' AND pid <> pg_backend_pid()
                    """).int(0, 0)) ?? 0
                if others > 0 { usleep(100_000) }
            } while others > 0 && Date() < deadline
            if others > 0 {
                logger.info("leaving the embedded PostgreSQL running: another staffcast server uses it", metadata: ["servers": "\(others)"])
                return
            }
        }
        do {
            try cluster.stop()
            logger.info("embedded PostgreSQL stopped")
        } catch {
            logger.error("could not stop the embedded PostgreSQL", metadata: ["error": "\(error)"])
        }
    }

    /// What replaces a password when a URL is shown.
    static let mask = "***"

    public static func redacted(_ url: String) -> String {
        guard var c = URLComponents(string: url), c.password != nil else {
            return url.replacingOccurrences(of: #"password=\S+"#, with: "password=" + mask, options: .regularExpression)
        }
        c.password = mask
        return c.string ?? url
    }
}
