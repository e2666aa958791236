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

    /// Creates the cluster on first use, starts it if it is not running, and makes sure the
    /// staffcast database exists. Returns true when this call started the server.
    @discardableResult
    public func ensureRunning() throws(PostgresError) -> Bool {
        let lock = try lockDataDir()
        defer { close(lock) }
        if !isInitialized { try initialize() }
        var started = false
        if !isRunning {
            // A crashed cluster leaves its pid file behind; pg_ctl copes with a stale one.
            let outcome = try pg(["pg_ctl", "start", "-D", clusterDir.path, "-w", "-t", "60",
                                  "-l", clusterDir.appendingPathComponent("server.log").path])
            guard outcome.status == 0 else {
                throw PostgresError(.cluster, "PostgreSQL did not start: \(outcome.output.trimmingCharacters(in: .whitespacesAndNewlines)) — see \(clusterDir.path)/server.log")
            }
            started = true
        }
        try createDatabaseIfMissing()
        return started
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

    /// Serialises first-time creation and start between processes on one data dir.
    private func lockDataDir() throws(PostgresError) -> Int32 {
        let path = dataDir.appendingPathComponent(".lock").path
        let fd = open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw PostgresError(.cluster, "cannot open \(path): \(String(cString: strerror(errno)))") }
        flock(fd, LOCK_EX)
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
