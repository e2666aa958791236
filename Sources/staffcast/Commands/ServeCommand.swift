import ArgumentParser
import Dispatch
import Foundation
import Logging
import StaffcastPostgres
import StaffcastServer

struct ServeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the staffcast server (WebSocket and HTTP API on one port).",
        discussion: """
            With no database URL, staffcast creates (first run) and starts its own PostgreSQL cluster
            under the data dir, and stops it again when the last server using it stops.

            Examples:
              staffcast serve                                   # 0.0.0.0:8080, cluster in ./.staffcast
              staffcast serve --listen 127.0.0.1:9000 --data-dir /var/lib/staffcast
              staffcast serve --database-url postgresql://staffcast@db.internal/staffcast
              staffcast serve --config /etc/staffcast.yaml --check-config
              staffcast serve --tls-cert cert.pem --tls-key key.pem   # https:// and wss:// only

            Several servers on one database serve one event together: run the same command with the
            same --database-url on each machine. SIGTERM or Ctrl-C stops gracefully (clients get
            1001 and reconnect elsewhere); a second signal exits at once.

            A port somebody already listens on (another staffcast too) is refused, naming it (exit 3).
            An embedded PostgreSQL left running by a killed staffcast is said in one line, stopped
            and started afresh. The SQL migrations are inside the binary: it runs from any folder.
            """)

    @OptionGroup var database: DatabaseOptions

    @Option(name: .long, help: ArgumentHelp("Address and port to listen on (env STAFFCAST_LISTEN; default 0.0.0.0:8080).",
                                            valueName: "host:port"))
    var listen: String?

    @Option(name: .long, help: ArgumentHelp("Database worker threads (default 4).", valueName: "n"))
    var workers: Int?

    @Option(name: .long, help: ArgumentHelp("Seconds between WebSocket pings (default 20).", valueName: "seconds"))
    var heartbeat: Int?

    @Option(name: .long, help: ArgumentHelp("""
        PEM certificate (chain) for TLS (env STAFFCAST_TLS_CERT; config tls_cert). With --tls-key, the \
        port serves only https:// and wss://.
        """, valueName: "file"))
    var tlsCert: String?

    @Option(name: .long, help: ArgumentHelp("PEM private key of --tls-cert (env STAFFCAST_TLS_KEY; config tls_key).",
                                            valueName: "file"))
    var tlsKey: String?

    @Flag(name: .long, help: "Validate the configuration (TLS files included), print it (secrets masked) and exit.")
    var checkConfig = false

    func run() throws {
        try reportingFailures {
            let file = try database.loadConfigFile()
            var configuration = try effectiveConfiguration(file)
            // The VAPID key lives beside the data when no file is named (made on first start).
            if configuration.reach.pushVapidKey == nil {
                configuration.reach.pushVapidKey = URL(fileURLWithPath: database.resolved(file).dataDir)
                    .appendingPathComponent("push_vapid_key.pem").path
            }
            try StaffcastServer.checkTLS(configuration)
            if checkConfig {
                printEffective(configuration, file)
                return
            }
            // Before the database: a taken port fails fast, without starting a cluster.
            try StaffcastServer.checkPortFree(configuration)
            raiseFileLimit()
            // From here a signal is held until the server is up, then stops it gracefully.
            StopSignal.install()
            let (target, logger) = try database.open(applicationName: "staffcast serve", file: file)
            warnIfPrivileged(target.serverConninfo, logger: logger)
            let server = StaffcastServer(configuration: configuration, conninfo: target.serverConninfo, logger: logger)
            do {
                try server.start()
            } catch {
                target.release(onlyIfStartedHere: false, logger: logger)
                throw error
            }
            let host = configuration.host == "0.0.0.0" ? "127.0.0.1" : configuration.host
            let secure = configuration.tlsEnabled ? "s" : ""
            FileHandle.standardOutput.write(Data("""
                staffcast \(StaffcastVersion.current) serving on \(configuration.host):\(server.port)\(secure.isEmpty ? "" : " (TLS)")
                  WebSocket  ws\(secure)://\(host):\(server.port)/v1/ws   (subprotocol staffcast.v1)
                  HTTP API   http\(secure)://\(host):\(server.port)/v1/…   health: /healthz  ready: /readyz
                  database   \(target.displayName)
                Stop with Ctrl-C (or SIGTERM).

                """.utf8))
            StopSignal.wait()
            logger.info("stop requested: stopping gracefully (a second signal exits at once)")
            server.stop()
            target.release(onlyIfStartedHere: false, logger: logger)
        }
    }

    func effectiveConfiguration(_ file: ConfigFile?) throws -> ServerConfiguration {
        var c = file?.server ?? ServerConfiguration()
        let listenText = listen ?? environment("STAFFCAST_LISTEN") ?? file?.listen ?? "0.0.0.0:8080"
        guard let colon = listenText.lastIndex(of: ":"), let port = Int(listenText[listenText.index(after: colon)...]),
              (0...65_535).contains(port) else {
            throw CommandFailure("listen address '\(listenText)' is not HOST:PORT (e.g. 0.0.0.0:8080)")
        }
        c.host = String(listenText[..<colon]).trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        c.port = port
        if let v = environment("STAFFCAST_OPS_TOKEN") {
            guard v.trimmingCharacters(in: .whitespaces).count >= 16 else {
                throw CommandFailure("STAFFCAST_OPS_TOKEN must be at least 16 characters (it guards /v1/status); unset it to have none")
            }
            c.opsToken = v
        }
        if let v = environment("STAFFCAST_WORKERS"), let n = Int(v) { c.databaseWorkers = n }
        if let v = environment("STAFFCAST_HEARTBEAT_INTERVAL"), let n = Int(v) { c.heartbeatInterval = n }
        if let v = environment("STAFFCAST_TLS_CERT") { c.tlsCertificate = v }
        if let v = environment("STAFFCAST_TLS_KEY") { c.tlsKey = v }
        if let tlsCert { c.tlsCertificate = tlsCert.isEmpty ? nil : tlsCert }
        if let tlsKey { c.tlsKey = tlsKey.isEmpty ? nil : tlsKey }
        if let workers { c.databaseWorkers = workers }
        if let heartbeat { c.heartbeatInterval = heartbeat }
        guard (1...64).contains(c.databaseWorkers) else { throw CommandFailure("workers must be from 1 to 64") }
        guard (1...3_600).contains(c.heartbeatInterval) else { throw CommandFailure("heartbeat must be from 1 to 3600 seconds") }
        return c
    }

    private func printEffective(_ c: ServerConfiguration, _ file: ConfigFile?) {
        let resolved = database.resolved(file)
        let lines: [(String, String)] = [
            ("config_file", file?.path ?? "(none)"),
            ("listen", "\(c.host):\(c.port)"),
            ("database_url", resolved.databaseURL.map(DatabaseTarget.redacted) ?? "(embedded cluster, as staffcast_server)"),
            ("migrate_database_url", database.resolvedMigrateURL(file).map(DatabaseTarget.redacted) ?? "(the database_url)"),
            ("data_dir", resolved.dataDir),
            ("log_level", (try? database.level(file).rawValue) ?? "info"),
            ("log_format", database.logJSON ? "json" : (file?.logFormat ?? "text")),
            ("database_workers", "\(c.databaseWorkers)"),
            ("job_queue_capacity", "\(c.jobQueueCapacity)"),
            ("outbound_max_frames", "\(c.outboundMaxFrames)"),
            ("outbound_max_bytes", "\(c.outboundMaxBytes)"),
            ("max_in_flight_per_connection", "\(c.maxInFlightPerConnection)"),
            ("send_burst", "\(c.sendBurst)"),
            ("send_rate_per_second", "\(c.sendRatePerSecond)"),
            ("listener_poll_interval", "\(c.listenerPollInterval)"),
            ("heartbeat_interval", "\(c.heartbeatInterval)"),
            ("recent_window", "\(c.recentWindow)"),
            ("shutdown_grace", "\(c.shutdownGrace)"),
            ("node_id", c.nodeID),
            ("ops_token", c.opsToken == nil ? "(none)" : "***"),
            ("metrics_require_token", "\(c.metricsRequireToken)"),
            ("service_threads", c.serviceThreads == 0 ? "0 (one per core: \(c.resolvedServiceThreads))" : "\(c.serviceThreads)"),
            ("event_loop", c.eventLoop.rawValue),
            ("max_connections", "\(c.maxConnections)"),
            ("max_connections_per_user", "\(c.maxConnectionsPerUser)"),
            ("header_timeout", "\(c.headerTimeout)"),
            ("idle_timeout", "\(c.idleTimeout)"),
            ("duplicate_window_minutes", "\(c.duplicateWindowMinutes)"),
            ("write_stall_timeout", "\(c.writeStallTimeout)"),
            ("escalate_after_minutes", c.escalation.emergencyDefaultMinutes.map(String.init) ?? "0 (emergencies do not escalate by default)"),
            ("max_escalation_rounds", "\(c.escalation.maxRounds)"),
            ("escalation_interval_seconds", c.escalation.intervalSecondsOverride.map(String.init) ?? "(none: each message's own minutes)"),
            ("push_vapid_key", c.reach.pushVapidKey ?? "(none)"),
            ("push_contact", c.reach.pushContact),
            ("smtp_url", c.reach.smtpURL.map(ReachConfiguration.redacted) ?? "(none: no email)"),
            ("email_from", c.reach.emailFrom ?? "(none)"),
            ("email_after_seconds", "\(c.reach.emailAfterSeconds)"),
            ("public_url", c.reach.publicURL ?? "(from the listen address)"),
            ("delivery_ca_file", c.reach.caFile ?? "(the system's CAs)"),
            ("delivery_concurrency_per_host", "\(c.reach.concurrencyPerHost)"),
            ("delivery_threads", "\(c.reach.threads)"),
            ("tls_cert", c.tlsCertificate ?? "(none: plain http:// and ws://)"),
            ("tls_key", c.tlsKey ?? "(none)"),
        ]
        print("configuration is valid:")
        for (k, v) in lines { print("  \(k): \(v)") }
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

    /// Each WebSocket is a file descriptor; allow as many as the system does.
    private func raiseFileLimit() {
        var limit = rlimit()
        if getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 && limit.rlim_cur < limit.rlim_max {
            limit.rlim_cur = limit.rlim_max
            _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        }
    }
}
