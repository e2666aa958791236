import Foundation
import Glibc

/// staffcast's own private PostgreSQL cluster under a data dir, used when no database URL is
/// given (the default for `make run` and a single machine).
///
/// Layout: `<data-dir>/postgres` is the cluster (PGDATA); its Unix socket lives inside it and
/// it listens on no TCP port, so only this machine's owner of the data dir can reach it.
/// PostgreSQL refuses to run as root; as root the cluster belongs to the `postgres` system user
/// and every PostgreSQL program runs through `runuser`. When that user cannot reach the data
/// dir (e.g. it is under /root), the cluster goes to `/var/lib/staffcast/<hash>` instead and
/// `<data-dir>/cluster-location` says where.
public struct EmbeddedCluster: Sendable {
    public let dataDir: URL
    public let clusterDir: URL
    public let binDir: URL
    /// The system user PostgreSQL runs as, when we are root.
    public let runAs: String?
    public static let databaseName = "staffcast"
    public static let superuser = "staffcast"
    /// The login `staffcast serve` uses (created by sql/006_roles.sql): no superuser, no
    /// ownership, member of staffcast_app only. The cluster trusts its socket (mode 0700).
    public static let serverLogin = "staffcast_server"

    public init(dataDir: String) throws(PostgresError) {
        let data = URL(fileURLWithPath: dataDir, relativeTo: URL(fileURLWithPath: FileManager.default.currentDirectoryPath))
            .standardizedFileURL
        guard let bin = Self.locateBinDir() else {
            throw PostgresError(.cluster, "PostgreSQL's server programs (initdb, pg_ctl) were not found; install the postgresql package (`make run` does) or set STAFFCAST_PG_BIN")
        }
        self.dataDir = data
        self.binDir = bin
        self.runAs = geteuid() == 0 ? "postgres" : nil
        do {
            try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
        } catch {
            throw PostgresError(.cluster, "cannot create the data dir \(data.path): \(error.localizedDescription)")
        }
        self.clusterDir = try Self.chooseClusterDir(dataDir: data, runAs: runAs)
    }

    /// True when `dataDir` holds an embedded cluster (created by `serve`, `migrate`, `cluster
    /// start` or `admin … --create`). Looks only: creates nothing.
    public static func exists(dataDir: String) -> Bool {
        let data = URL(fileURLWithPath: dataDir, relativeTo: URL(fileURLWithPath: FileManager.default.currentDirectoryPath))
            .standardizedFileURL
        let pointer = data.appendingPathComponent("cluster-location")
        let cluster = (try? String(contentsOf: pointer, encoding: .utf8))
            .map { URL(fileURLWithPath: $0.trimmingCharacters(in: .whitespacesAndNewlines)) }
            ?? data.appendingPathComponent("postgres")
        return FileManager.default.fileExists(atPath: cluster.appendingPathComponent("PG_VERSION").path)
    }

    /// libpq connection string for the cluster's staffcast database.
    public var conninfo: String { conninfo(database: Self.databaseName) }

    public func conninfo(database: String, user: String = EmbeddedCluster.superuser) -> String {
        "host=\(PGConnection.conninfoQuote(clusterDir.path)) port=5432 dbname=\(PGConnection.conninfoQuote(database)) user=\(user) connect_timeout=5"
    }

    /// A URL form of the same, for printing (`postgresql:///staffcast?host=…`).
    public var url: String {
        "postgresql:///\(Self.databaseName)?host=\(clusterDir.path)&user=\(Self.superuser)"
    }

    // MARK: lifecycle

    public var isInitialized: Bool {
        FileManager.default.fileExists(atPath: clusterDir.appendingPathComponent("PG_VERSION").path)
    }

    public var isRunning: Bool {
        guard isInitialized, let outcome = try? pg(["pg_ctl", "status", "-D", clusterDir.path]) else { return false }
        return outcome.status == 0
    }

    /// Sessions of other programs on the running cluster: other staffcast processes attached by
    /// `database_url` (each names itself `staffcast-<pid>`, `PGConnection.applicationName`),
    /// `psql`, … — not this process's own. nil when the cluster does not answer.
    public func otherClients() -> Int? {
        guard let conn = try? PGConnection(conninfo: conninfo(database: "postgres")),
              let r = try? conn.query("""
                  SELECT count(*) FROM pg_stat_activity
                  WHERE backend_type = 'client backend' AND pid <> pg_backend_pid() AND application_name <> $1
                  """, [PGConnection.applicationName]) else { return nil }
        return r.int(0, 0)
    }

    /// What `ensureRunning` did.
    public struct StartOutcome: Sendable {
        /// True when this call started PostgreSQL.
        public var started: Bool
        /// The postmaster's pid when a cluster left running by a staffcast that died without
        /// stopping it (kill -9) was found, stopped and started afresh.
        public var stoppedOrphan: Int32?
        /// A descriptor holding a shared lock on `<data-dir>/in-use` for as long as this process
        /// uses the cluster (nil for a detached start); the caller owns it. The kernel drops the
        /// lock when the process ends, however it ends: that is how an orphan is recognised.
        public var inUseLock: Int32?
    }

    /// Creates the cluster on first use, starts it if it is not running, and makes sure the
    /// staffcast database exists.
    ///
    /// A cluster that runs although it was started by a staffcast process (recorded in
    /// `<data-dir>/cluster-owner`) and no staffcast process holds `<data-dir>/in-use` any more
    /// is an orphan: its server was killed (kill -9, a crash) before it could stop it. It is
    /// stopped and started afresh, and the outcome says so — unless other programs have
    /// sessions on it (servers attached by `database_url`): then it is taken over as it runs. A cluster started with `detached`
    /// (`staffcast cluster start`, for scripts) belongs to nobody and is never taken for one.
    @discardableResult
    public func ensureRunning(detached: Bool = false) throws(PostgresError) -> StartOutcome {
        guard let lock = try lockDataDir() else { throw PostgresError(.cluster, "the data dir's lock was not taken") }
        defer { close(lock) }
        if !isInitialized { try initialize() }
        var inUse: Int32?
        if !detached {
            let path = dataDir.appendingPathComponent("in-use").path
            let fd = open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
            guard fd >= 0 else { throw PostgresError(.cluster, "cannot open \(path): \(String(cString: strerror(errno)))") }
            inUse = fd
        }
        var orphan: Int32?
        if let inUse, isRunning, readOwner() != nil, flock(inUse, LOCK_EX | LOCK_NB) == 0 {
            if let others = otherClients(), others > 0 {
                // Servers attached by database_url still use it: restarting it would cut them off.
                writeOwner(getpid())
            } else {
                orphan = postmasterPID() ?? 0
                try stop()
            }
        }
        var started = false
        // Another process may have started it a moment ago, and a start after a crash runs
        // recovery first: a cluster still "starting" refuses connections, so wait for it.
        if isRunning { try waitUntilReady() }
        if !isRunning {
            do {
                try startPostgres(detached: detached)
            } catch {
                if let inUse { close(inUse) }
                throw error
            }
            started = true
        }
        // Shared: every staffcast using the cluster holds it at once (turns our EX into SH).
        if let inUse { flock(inUse, LOCK_SH) }
        do {
            try createDatabaseIfMissing()
        } catch {
            if let inUse { close(inUse) }
            throw error
        }
        return StartOutcome(started: started, stoppedOrphan: orphan, inUseLock: inUse)
    }

    /// The staffcast process that started the running cluster (nil: detached or unknown).
    private func readOwner() -> Int32? {
        let text = try? String(contentsOf: dataDir.appendingPathComponent("cluster-owner"), encoding: .utf8)
        return text.flatMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
    }

    /// `pg_ctl start`, recording who started it. A crashed cluster leaves its pid file behind;
    /// pg_ctl copes with a stale one, and PostgreSQL recovers from its WAL first.
    private func startPostgres(detached: Bool) throws(PostgresError) {
        let outcome = try pg(["pg_ctl", "start", "-D", clusterDir.path, "-w", "-t", "60",
                              "-l", clusterDir.appendingPathComponent("server.log").path])
        guard outcome.status == 0 else {
            throw PostgresError(.cluster, "PostgreSQL did not start: \(outcome.output.trimmingCharacters(in: .whitespacesAndNewlines)) — see \(clusterDir.path)/server.log")
        }
        writeOwner(detached ? nil : getpid())
    }

    /// True when PostgreSQL died without stopping (kill -9, a crash, the OOM killer): its pid
    /// file is still there but no process has that pid. A stop (`staffcast cluster stop`,
    /// `pg_ctl stop`) removes the file, so a cluster stopped on purpose is not "crashed".
    /// Cheap: one file read and one `kill(pid, 0)`.
    ///
    /// A dead postmaster whose parent is this process (staffcast as a container's PID 1, which
    /// inherits orphans) stays a zombie that `kill(pid, 0)` still finds: it is reaped here and
    /// counts as dead.
    public var hasCrashed: Bool {
        guard let pid = postmasterPID(), pid > 0 else { return false }
        if kill(pid, 0) != 0 { return errno == ESRCH }
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return false }
        guard stat[stat.index(after: close)...].trimmingCharacters(in: .whitespaces).hasPrefix("Z") else { return false }
        _ = waitpid(pid, nil, WNOHANG)
        return true
    }

    /// Starts a crashed cluster again (`hasCrashed`), under the data dir's lock as any start;
    /// PostgreSQL recovers from its WAL, keeping exactly what was committed. False when there
    /// was nothing to do (another process restarted it meanwhile, or the lock was busy).
    public func restartAfterCrash() throws(PostgresError) -> Bool {
        guard let lock = try lockDataDir(waitingAtMost: 5) else { return false }
        defer { close(lock) }
        guard hasCrashed else { return false }
        try startPostgres(detached: false)
        return true
    }

    private func writeOwner(_ pid: Int32?) {
        try? Data((pid.map(String.init) ?? "detached").utf8).write(to: dataDir.appendingPathComponent("cluster-owner"))
    }

    /// The postmaster's pid: the first line of `postmaster.pid`.
    /// Waits (at most `seconds`) until the running postmaster says it accepts connections: the
    /// status line of `postmaster.pid` (the 8th), which `pg_ctl -w` reads too.
    private func waitUntilReady(seconds: Double = 120) throws(PostgresError) {
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            let text = try? String(contentsOf: clusterDir.appendingPathComponent("postmaster.pid"), encoding: .utf8)
            let lines = text?.split(separator: "\n", omittingEmptySubsequences: false) ?? []
            let status = lines.count > 7 ? lines[7].trimmingCharacters(in: .whitespaces) : ""
            // "ready", or no pid file any more (stopped: the caller starts it).
            if text == nil || status == "ready" { return }
            guard Date() < deadline else {
                throw PostgresError(.cluster, "PostgreSQL at \(clusterDir.path) is still \(status.isEmpty ? "starting" : status) after \(Int(seconds)) s (recovering from a crash?) — see \(clusterDir.path)/server.log")
            }
            usleep(100_000)
        }
    }

    private func postmasterPID() -> Int32? {
        let text = try? String(contentsOf: clusterDir.appendingPathComponent("postmaster.pid"), encoding: .utf8)
        return text?.split(separator: "\n").first.flatMap { Int32($0.trimmingCharacters(in: .whitespaces)) }
    }

    /// Stops the cluster (fast shutdown: running transactions roll back, committed data stays).
    /// `mode: "immediate"` is a crash as far as PostgreSQL knows (fault tests): the next start
    /// recovers from the WAL, keeping exactly what was committed.
    public func stop(mode: String = "fast") throws(PostgresError) {
        guard isRunning else { return }
        let outcome = try pg(["pg_ctl", "stop", "-D", clusterDir.path, "-m", mode, "-w", "-t", "30"])
        guard outcome.status == 0 else {
            throw PostgresError(.cluster, "PostgreSQL did not stop: \(outcome.output.trimmingCharacters(in: .whitespacesAndNewlines))")
        }
    }

    // MARK: internals

    private func initialize() throws(PostgresError) {
        try makeOwned(clusterDir, mode: 0o700)
        let outcome = try pg(["initdb", "-D", clusterDir.path, "-U", Self.superuser, "--auth=trust",
                              "-E", "UTF8", "--no-locale", "--no-instructions"])
        guard outcome.status == 0 else {
            throw PostgresError(.cluster, "initdb failed: \(outcome.output.trimmingCharacters(in: .whitespacesAndNewlines))")
        }
        // Only a Unix socket inside PGDATA (mode 0700): nothing on the network can reach it.
        let conf = """

            # --- staffcast embedded cluster ---
            listen_addresses = ''
            unix_socket_directories = '\(clusterDir.path.replacingOccurrences(of: "'", with: "''"))'
            port = 5432
            max_connections = 200
            shared_buffers = 128MB
            log_min_messages = warning
            """
        let confPath = clusterDir.appendingPathComponent("postgresql.conf").path
        guard let handle = FileHandle(forWritingAtPath: confPath) else {
            throw PostgresError(.cluster, "cannot open \(confPath)")
        }
        handle.seekToEndOfFile()
        handle.write(Data(conf.utf8))
        handle.closeFile()
    }

    private func createDatabaseIfMissing() throws(PostgresError) {
        let conn = try PGConnection(conninfo: conninfo(database: "postgres"))
        let exists = try conn.query("SELECT 1 FROM pg_database WHERE datname = $1", [Self.databaseName]).rowCount == 1
        if !exists {
            do {
                try conn.execute("CREATE DATABASE \(Self.databaseName)")
            } catch where error.sqlState == "42P04" {
                // created by a concurrent start: fine
            }
        }
    }

    /// Runs a PostgreSQL program from `binDir`, as `runAs` when we are root.
    func pg(_ args: [String]) throws(PostgresError) -> ProcessRunner.Outcome {
        let program = binDir.appendingPathComponent(args[0]).path
        if let runAs {
            return try ProcessRunner.run("/usr/sbin/runuser", ["-u", runAs, "--", program] + args.dropFirst())
        }
        return try ProcessRunner.run(program, Array(args.dropFirst()))
    }

    private func makeOwned(_ dir: URL, mode: Int) throws(PostgresError) {
        do {
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        } catch {
            throw PostgresError(.cluster, "cannot create \(dir.path): \(error.localizedDescription)")
        }
        chmod(dir.path, mode_t(mode))
        if let runAs, let pw = getpwnam(runAs) {
            chown(dir.path, pw.pointee.pw_uid, pw.pointee.pw_gid)
        }
    }

    /// Serialises first-time creation, start and the last user's stop between processes on one
    /// data dir (a descriptor holding `<data-dir>/.lock` exclusively; close it to let go).
    /// `waitingAtMost`: give up after that many seconds (nil: wait as long as it takes), and
    /// return nil.
    func lockDataDir(waitingAtMost: Double? = nil) throws(PostgresError) -> Int32? {
        let path = dataDir.appendingPathComponent(".lock").path
        let fd = open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw PostgresError(.cluster, "cannot open \(path): \(String(cString: strerror(errno)))") }
        guard let waitingAtMost else {
            flock(fd, LOCK_EX)
            return fd
        }
        let deadline = Date().addingTimeInterval(waitingAtMost)
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            guard Date() < deadline else {
                close(fd)
                return nil
            }
            usleep(50_000) // flock has no wait with a deadline
        }
        return fd
    }

    static func chooseClusterDir(dataDir: URL, runAs: String?) throws(PostgresError) -> URL {
        let pointer = dataDir.appendingPathComponent("cluster-location")
        if let text = try? String(contentsOf: pointer, encoding: .utf8) {
            return URL(fileURLWithPath: text.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        var dir = dataDir.appendingPathComponent("postgres")
        if let runAs {
            let reachable = (try? ProcessRunner.run("/usr/sbin/runuser", ["-u", runAs, "--", "test", "-x", dataDir.path]))?.status == 0
            if !reachable {
                var hash: UInt64 = 1469598103934665603 // FNV-1a of the path: a stable, short folder name
                for b in dataDir.path.utf8 { hash = (hash ^ UInt64(b)) &* 1099511628211 }
                dir = URL(fileURLWithPath: "/var/lib/staffcast/\(String(hash, radix: 16))/postgres")
                try? FileManager.default.createDirectory(at: dir.deletingLastPathComponent(), withIntermediateDirectories: true)
                try? Data(dir.path.utf8).write(to: pointer)
            }
        }
        // A Unix socket path may be at most 107 bytes.
        if (dir.path + "/.s.PGSQL.5432").utf8.count > 100 {
            throw PostgresError(.cluster, "the data dir path \(dataDir.path) is too long for PostgreSQL's socket; choose a shorter --data-dir")
        }
        return dir
    }

    /// `$STAFFCAST_PG_BIN`, else the newest `/usr/lib/postgresql/N/bin` that has initdb.
    public static func locateBinDir() -> URL? {
        let fm = FileManager.default
        if let env = ProcessInfo.processInfo.environment["STAFFCAST_PG_BIN"], !env.isEmpty {
            return URL(fileURLWithPath: env)
        }
        let root = "/usr/lib/postgresql"
        let versions = ((try? fm.contentsOfDirectory(atPath: root)) ?? []).compactMap(Int.init).sorted(by: >)
        for v in versions where fm.isExecutableFile(atPath: "\(root)/\(v)/bin/initdb") {
            return URL(fileURLWithPath: "\(root)/\(v)/bin")
        }
        return nil
    }
}
