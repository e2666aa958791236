/// Every configuration key of staffcast, each declared once. The server's settings
/// (`ServerConfiguration`, `EngineConfiguration`) take their defaults from here; the command line
/// reads the file, the environment and the flags through `ConfigResolver`; docs/configuration.md is
/// `ConfigReference.markdown()` (a test keeps them equal). Order: as the reference lists them.
extension ConfigKey {
    public static let all: [ConfigKey] = [
        listen, databaseURL, migrateDatabaseURL, dataDir, logLevel, logFormat,
        databaseWorkers, jobQueueCapacity, outboundMaxFrames, outboundMaxBytes, maxInFlightPerConnection,
        sendBurst, sendRatePerSecond, replyBurst, replyRatePerMinute,
        listenerPollInterval, localFanout, heartbeatInterval, serviceThreads, eventLoop,
        maxConnections, maxConnectionsPerUser, headerTimeout, idleTimeout, writeStallTimeout,
        duplicateWindowMinutes, recentWindow, shutdownGrace, nodeID, opsToken, metricsRequireToken,
        escalateAfterMinutes, maxEscalationRounds, escalationIntervalSeconds, tlsCert, tlsKey,
        pushVapidKey, pushContact, pushMaxSubscriptionsPerUser, pushAllowPrivateHosts, smtpURL, emailFrom, emailAfterSeconds, publicURL, deliveryCAFile,
        deliveryConcurrencyPerHost, deliveryThreads,
    ]

    /// The key called `name` (YAML spelling), if there is one.
    public static func named(_ name: String) -> ConfigKey? { all.first { $0.name == name } }

    // Where the server is and what it logs.
    public static let listen = ConfigKey("listen", .text(.hostPort), default: .text("0.0.0.0:8080"), value: "host:port",
        "Address and port of the WebSocket (/v1/ws) and the HTTP API; port 0 picks a free one.")
    public static let databaseURL = ConfigKey("database_url", .text(.anything), unset: "the embedded cluster under data_dir",
        secrecy: .passwordInURL, value: "url",
        "PostgreSQL URL the server connects with: the staffcast_server login, which owns nothing (docs/operations.md).")
    public static let migrateDatabaseURL = ConfigKey("migrate_database_url", .text(.anything), unset: "database_url",
        secrecy: .passwordInURL, value: "url",
        "PostgreSQL URL of the tables' owner, for migrations and admin commands.")
    public static let dataDir = ConfigKey("data_dir", .text(.anything), default: .text("./.staffcast"), value: "dir",
        "Where the embedded PostgreSQL cluster (and the default VAPID key) lives.")
    public static let logLevel = ConfigKey("log_level", .choice(["trace", "debug", "info", "notice", "warning", "error", "critical"]),
        default: .text("info"), value: "level", "Least severe log line written.")
    public static let logFormat = ConfigKey("log_format", .choice(["text", "json"]), default: .text("text"), value: "format",
        "text (one readable line each) or json (one JSON object per line; flag --log-json too).")

    // Database workers and queues.
    public static let databaseWorkers = ConfigKey("database_workers", .integer(1...64), default: .integer(4), value: "n",
        formerEnvironmentNames: ["STAFFCAST_WORKERS"], formerFlags: ["--workers"],
        "Threads, each with one PostgreSQL connection, that run requests off the service loops.")
    public static let jobQueueCapacity = ConfigKey("job_queue_capacity", .integer(1...1_000_000), default: .integer(10_000),
        value: "n", "Requests waiting for a database worker; past it they are refused with unavailable at once.")
    public static let outboundMaxFrames = ConfigKey("outbound_max_frames", .integer(16...1_000_000), default: .integer(2_048),
        value: "n", "Frames waiting for one client; past it (or outbound_max_bytes) it is closed with 4008 and catches up.")
    public static let outboundMaxBytes = ConfigKey("outbound_max_bytes", .integer(65_536...(1 << 30)), default: .integer(8 << 20),
        value: "bytes", "Bytes waiting for one client; past it the client is too slow and is closed with 4008.")
    public static let maxInFlightPerConnection = ConfigKey("max_in_flight_per_connection", .integer(1...10_000),
        default: .integer(32), value: "n", "Requests one connection may have waiting on the database; at this many the server stops reading it until answers come back.")
    public static let sendBurst = ConfigKey("send_burst", .number(1...100_000), default: .number(20), value: "n",
        "Messages one connection may send at once before send_rate_per_second applies.")
    public static let sendRatePerSecond = ConfigKey("send_rate_per_second", .number(0.01...100_000), default: .number(5),
        value: "n", "Messages one connection may send per second after its burst.")
    public static let replyBurst = ConfigKey("reply_burst", .number(1...100_000), default: .number(5), value: "n",
        "Replies and poll answers one user may send at once (over all their connections) before reply_rate_per_minute applies.")
    public static let replyRatePerMinute = ConfigKey("reply_rate_per_minute", .number(0.1...6_000_000), default: .number(6),
        value: "n", "Replies and poll answers one user may send per minute after their burst.")
    public static let listenerPollInterval = ConfigKey("listener_poll_interval", .number(0.1...300), default: .number(2),
        value: "seconds", "Seconds between change-log reads when no notification arrives (a safety net).")
    public static let localFanout = ConfigKey("local_fanout", .flag, default: .flag(true), value: "bool",
        "Hand sends this server committed to its own subscribers at once, in seq order, instead of after reading them back from the change log; false: every message waits for the change feed.")

    // Connections.
    public static let heartbeatInterval = ConfigKey("heartbeat_interval", .integer(1...3_600), default: .integer(20),
        value: "seconds", formerFlags: ["--heartbeat"],
        "Seconds of silence before a WebSocket is pinged; silent for twice this, it is closed.")
    public static let serviceThreads = ConfigKey("service_threads", .integer(0...256), default: .integer(0), value: "n",
        "Service loops, each with a share of the connections on the same port; 0: one per core.")
    public static let eventLoop = ConfigKey("event_loop", .choice(["ev", "poll"]), default: .text("ev"), value: "kind",
        refused: ["uv": "uv is not offered: Debian's libwebsockets 4.1.6 libuv plugin closes a descriptor twice at shutdown"],
        "How each service loop waits for its sockets: ev (libev on epoll) or poll (libwebsockets' own poll(), over its TLS connections; plain ones stay on epoll).")
    public static let maxConnections = ConfigKey("max_connections", .integer(1...10_000_000), default: .integer(50_000),
        value: "n", "WebSockets this server holds at once; more are refused with 503.")
    public static let maxConnectionsPerUser = ConfigKey("max_connections_per_user", .integer(1...10_000_000),
        default: .integer(20), value: "n", "WebSockets one user may hold at once on this server; more get 429.")
    public static let headerTimeout = ConfigKey("header_timeout", .number(0.5...600), default: .number(10), value: "seconds",
        "Seconds a client has to send a whole HTTP request (head and body).")
    public static let idleTimeout = ConfigKey("idle_timeout", .number(1...3_600), default: .number(60), value: "seconds",
        "Seconds a keep-alive HTTP connection may sit idle between requests.")
    public static let writeStallTimeout = ConfigKey("write_stall_timeout", .number(1...3_600), default: .number(15),
        value: "seconds", "Seconds a WebSocket may leave queued frames unread before it is dropped.")
    public static let duplicateWindowMinutes = ConfigKey("duplicate_window_minutes", .integer(0...1_440), default: .integer(10),
        value: "minutes", "The same text to the same event within this many minutes is refused with conflict unless forced; 0: off.")
    public static let recentWindow = ConfigKey("recent_window", .integer(16...1_000_000), default: .integer(4_096), value: "n",
        "Live messages (and as many edits and retracts) kept to line up new subscriptions with fan-out.")
    public static let shutdownGrace = ConfigKey("shutdown_grace", .number(0...60), default: .number(3), value: "seconds",
        "Seconds a graceful stop waits for clients to take their 1001 close.")
    public static let nodeID = ConfigKey("node_id", .text(.anything), unset: "host name and pid", value: "name",
        "This server's name in logs, hello and /v1/status.")
    public static let opsToken = ConfigKey("ops_token", .text(.minimumLength(16, why: "it guards /v1/status; leave it out to have none")),
        unset: "/v1/status is for event owners only", secrecy: .secret, value: "secret",
        "Shared secret that opens /v1/status (and /metrics with metrics_require_token) as a bearer token.")
    public static let metricsRequireToken = ConfigKey("metrics_require_token", .flag, default: .flag(false), value: "bool",
        "Require the ops token for /metrics too.")

    // Emergencies.
    public static let escalateAfterMinutes = ConfigKey("escalate_after_minutes", .integer(0...1_440), default: .integer(5),
        value: "minutes", "Minutes after which an unread emergency reminds and escalates, unless it says otherwise; 0: not by default.")
    public static let maxEscalationRounds = ConfigKey("max_escalation_rounds", .integer(1...100), default: .integer(3),
        value: "n", "Rounds of reminders and escalation notifications at most, per message.")
    public static let escalationIntervalSeconds = ConfigKey("escalation_interval_seconds", .integer(1...86_400),
        unset: "each message's own minutes", value: "seconds",
        "Test/ops knob: every escalating message's interval becomes this many seconds. Leave it out in production.")

    // TLS.
    public static let tlsCert = ConfigKey("tls_cert", .text(.anything), unset: "plain http:// and ws://", value: "file",
        "PEM certificate (chain, leaf first); with tls_key the port serves only https:// and wss://.")
    public static let tlsKey = ConfigKey("tls_key", .text(.anything), unset: "none", value: "file",
        "PEM private key of tls_cert (the file's path is printed, never its contents).")

    // Reaching staff: Web Push, email, webhooks.
    public static let pushVapidKey = ConfigKey("push_vapid_key", .text(.anything), unset: "push_vapid_key.pem in data_dir",
        value: "file", "PEM P-256 private key for Web Push (VAPID), made on first start when absent; keep it.")
    public static let pushContact = ConfigKey("push_contact", .text(.url(schemes: ["mailto", "https"], example: "mailto:ops@example.org")),
        default: .text("mailto:staffcast@localhost"), value: "url",
        "Where push services can reach whoever runs this server (the VAPID sub).")
    public static let pushMaxSubscriptionsPerUser = ConfigKey("push_max_subscriptions_per_user", .integer(1...1_000),
        default: .integer(10), value: "n",
        "Push subscriptions (devices) one person may have; a new one past it replaces their oldest.")
    public static let pushAllowPrivateHosts = ConfigKey("push_allow_private_hosts", .flag, default: .flag(false), value: "bool",
        "Accept push endpoints on IP addresses, localhost and private networks (tests, a private push service); false: refused with 400.")
    public static let smtpURL = ConfigKey("smtp_url", .text(.url(schemes: ["smtp", "smtps"], example: "smtp://user:password@mail.example.org:587")),
        unset: "no email", secrecy: .passwordInURL, value: "url",
        "SMTP server for emailing the unreached (STARTTLS when offered; smtps:// for TLS at once).")
    public static let emailFrom = ConfigKey("email_from", .text(.bareAddress), unset: "no email", value: "address",
        "From address of those emails.")
    public static let emailAfterSeconds = ConfigKey("email_after_seconds", .integer(1...86_400), default: .integer(60),
        value: "seconds", "Seconds after which an unread urgent or emergency message is emailed once.")
    public static let publicURL = ConfigKey("public_url", .text(.url(schemes: ["http", "https"], example: "https://staffcast.example.org")),
        unset: "from the listen address", value: "url", "The address people open the app at, for links in emails.")
    public static let deliveryCAFile = ConfigKey("delivery_ca_file", .text(.anything), unset: "the system's CAs", value: "file",
        "PEM CA bundle trusted for push services, webhooks and SMTP besides the system's.")
    public static let deliveryConcurrencyPerHost = ConfigKey("delivery_concurrency_per_host", .integer(1...256),
        default: .integer(16), value: "n", "Deliveries in flight at once to one host.")
    public static let deliveryThreads = ConfigKey("delivery_threads", .integer(1...256), default: .integer(32), value: "n",
        "Threads doing the HTTP and SMTP I/O of deliveries (they mostly wait).")
}
