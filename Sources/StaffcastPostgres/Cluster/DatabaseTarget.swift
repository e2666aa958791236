import Foundation
import Logging
import StaffcastCore

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

    /// Stops the embedded cluster when no other staffcast process still uses it (or, with
    /// `onlyIfStartedHere`, only when this process started it: admin commands), and no other
    /// program has a session on it (`EmbeddedCluster.otherClients`).
    ///
    /// Every staffcast process using the cluster holds the data dir's `in-use` file shared, and
    /// the kernel drops a killed one's lock; so the last user is the one that can take it
    /// exclusively. Several stopping at once each give up their shared lock first, then take
    /// turns on the data dir's lock (each waiting at most `dirLockWait` seconds), and each tries
    /// for up to `lastUserWait` seconds: one of them gets it and stops the cluster, the others
    /// find it stopped. (Counting the other servers' sessions instead saw two servers stopping
    /// together as each other's users, and both left PostgreSQL running.) The last user stops it
    /// holding the data dir's lock, as a start holds it: a server starting meanwhile either
    /// becomes a user first (and the cluster stays) or starts it again after the stop; it used
    /// to find it running, then stopped under it, and fail. A stop that cannot get the lock in
    /// time leaves PostgreSQL running (the next start finds an orphan and restarts it).
    public func release(onlyIfStartedHere: Bool, logger: Logger, lastUserWait: Double = 2, dirLockWait: Double = 10) {
        guard let cluster, let fd = inUseLock else { return }
        defer {
            close(fd)
            inUseLock = nil
        }
        if onlyIfStartedHere && !startedCluster { return }
        // Our shared lock goes first, then the data dir's: a start holding that one never waits
        // on ours, and others stopping with us have given theirs up too.
        flock(fd, LOCK_UN)
        guard let dirLock = try? cluster.lockDataDir(waitingAtMost: dirLockWait) else {
            logger.warning("leaving the embedded PostgreSQL running: another staffcast process is starting or stopping it")
            return
        }
        defer { close(dirLock) }
        let deadline = Date().addingTimeInterval(lastUserWait)
        var last = flock(fd, LOCK_EX | LOCK_NB) == 0
        while !last && Date() < deadline {
            usleep(50_000)
            last = flock(fd, LOCK_EX | LOCK_NB) == 0
        }
        guard last else {
            logger.info("leaving the embedded PostgreSQL running: another staffcast process uses it")
            return
        }
        guard cluster.isRunning else { return } // another one stopping with us stopped it
        // Servers attached by database_url (the attack round: stopping the server that started
        // the cluster stopped PostgreSQL under the two others) hold no lock here: ask PostgreSQL.
        if let others = cluster.otherClients(), others > 0 {
            logger.info("leaving the embedded PostgreSQL running: \(others) session(s) of other programs use it (servers attached by database_url, psql, …); `staffcast cluster stop` stops it")
            return
        }
        do {
            try cluster.stop()
            logger.info("embedded PostgreSQL stopped")
        } catch {
            logger.error("could not stop the embedded PostgreSQL", metadata: ["error": "\(error)"])
        }
    }

    /// `url` or conninfo with its password hidden (the mask is `SecretMask`'s, as in `config show`).
    public static func redacted(_ url: String) -> String {
        SecretMask.hidingPassword(in: url)
    }
}
