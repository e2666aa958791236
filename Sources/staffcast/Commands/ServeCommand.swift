import ArgumentParser
import Dispatch
import Foundation
import Logging
import StaffcastCore
import StaffcastPostgres
import StaffcastServer

struct ServeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the staffcast server (WebSocket and HTTP API on one port).",
        discussion: """
            With no database URL, staffcast creates (first run) and starts its own
            PostgreSQL cluster under the data dir, and stops it again when the last server
            using it stops.

            Examples:
              # 0.0.0.0:8080, cluster in ./.staffcast
              staffcast serve
              staffcast serve --listen 127.0.0.1:9000 --data-dir /var/lib/staffcast
              staffcast serve --database-url postgresql://staffcast@db.internal/staffcast
              staffcast serve --config /etc/staffcast.yaml --check-config
              # https:// and wss:// only
              staffcast serve --tls-cert cert.pem --tls-key key.pem

            Several servers on one database serve one event together: run the same command
            with the same --database-url on each machine. SIGTERM or Ctrl-C stops
            gracefully (clients get 1001 and reconnect elsewhere); a second signal exits at
            once.

            A port somebody already listens on (another staffcast too) is refused, naming
            it (exit 3). An embedded PostgreSQL left running by a killed staffcast is said
            in one line, stopped and started afresh. The SQL migrations are inside the
            binary: it runs from any folder.

            Settings: every configuration key is a flag, an environment variable and a
            config file key (flag > environment > file > default; docs/configuration.md;
            `staffcast config show`):
            \(ConfigReference.flagHelp())
            """)

    @OptionGroup var options: ConfigurationOptions
    private var database: DatabaseOptions { options.database }

    @Flag(name: .long, help: """
        Validate the configuration (TLS files included), print every key's value and where it came \
        from (secrets masked) and exit: 0 when valid, else one line naming the key and its source (exit 64).
        """)
    var checkConfig = false

    func run() throws {
        try reportingFailures {
            let (settings, file) = try options.settings()
            // The VAPID key lives beside the data when no file is named (made on first start).
            let configuration = ConfigurationOptions.serverConfiguration(settings)
            try StaffcastServer.checkTLS(configuration)
            if checkConfig {
                print("configuration is valid:")
                print(ConfigurationOptions.printout(settings, configuration, file: file))
                return
            }
            // Before the database: a taken port fails fast, without starting a cluster.
            try StaffcastServer.checkPortFree(configuration)
            raiseFileLimit(maxConnections: configuration.maxConnections, tls: configuration.tlsEnabled)
            // From here a swift-service-lifecycle ServiceGroup owns SIGTERM and SIGINT: the first
            // stops the server gracefully, in the order `ServerLifecycle` gives; a second exits at once.
            let lifecycle = ServerLifecycle()
            let startup = ServeStartup(
                configuration: configuration, lifecycle: lifecycle,
                open: { try database.open(applicationName: "staffcast serve", settings: settings) },
                prepared: { target, logger in warnIfPrivileged(target.serverConninfo, logger: logger) },
                banner: { server, target in
                    let host = configuration.host == "0.0.0.0" ? "127.0.0.1" : configuration.host
                    let secure = configuration.tlsEnabled ? "s" : ""
                    FileHandle.standardOutput.write(Data("""
                        staffcast \(StaffcastVersion.current) serving on \(configuration.host):\(server.port)\(secure.isEmpty ? "" : " (TLS)")
                          WebSocket  ws\(secure)://\(host):\(server.port)/v1/ws   (subprotocol staffcast.v1)
                          HTTP API   http\(secure)://\(host):\(server.port)/v1/…   health: /healthz  ready: /readyz
                          database   \(target.displayName)
                        Stop with Ctrl-C (or SIGTERM).

                        """.utf8))
                })
            try runUntilStopped(lifecycle.services(startup: startup))
        }
    }

    /// The server's login should not be able to leave row-level security (docs/security.md):
    /// say so loudly when it is a superuser, bypasses RLS or owns the tables.
    private func warnIfPrivileged(_ conninfo: String, logger: Logger) {
        guard let conn = try? PGConnection(conninfo: conninfo),
              let r = try? conn.query("""
                  SELECT current_user, r.rolsuper, r.rolbypassrls,
                         EXISTS (SELECT 1 FROM pg_tables WHERE schemaname = 'public' AND tablename = 'staff_messages'
                                 AND tableowner = current_user)
                  FROM pg_roles r WHERE r.rolname = current_user
                  """), r.rowCount == 1 else { return }
        if r.bool(0, 1) == true || r.bool(0, 2) == true || r.bool(0, 3) == true {
            logger.warning("the server's database login is a superuser, bypasses row-level security or owns the tables; serve as staffcast_server with a separate migrate_database_url (docs/operations.md, database roles)",
                           metadata: ["role": "\(r.string(0, 0) ?? "?")"])
        }
    }

    /// Each WebSocket is a file descriptor: allow what `max_connections` needs, up to what the
    /// system allows (`FileLimitPolicy`: not simply the hard limit, which libwebsockets would
    /// walk on every connection).
    private func raiseFileLimit(maxConnections: Int, tls: Bool) {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return }
        let target = FileLimitPolicy.target(current: UInt64(limit.rlim_cur), hard: UInt64(limit.rlim_max),
                                            maxConnections: maxConnections, tls: tls)
        if target > UInt64(limit.rlim_cur) {
            limit.rlim_cur = rlim_t(target)
            _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        }
    }
}
