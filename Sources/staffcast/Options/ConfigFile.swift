import Foundation
import StaffcastServer
import Yams

/// The YAML config file (`--config FILE`). Every key is optional; flags and `STAFFCAST_…`
/// environment variables override it. Unknown keys and bad values are errors that name the key.
/// `config/staffcast.example.yaml` lists every key with its default.
struct ConfigFile {
    var listen: String?
    var databaseURL: String?
    var migrateDatabaseURL: String?
    var dataDir: String?
    var logLevel: String?
    var logFormat: String?
    var server = ServerConfiguration()
    var path: String

    static let keys: Set<String> = [
        "migrate_database_url",
        "listen", "database_url", "data_dir", "log_level", "log_format", "database_workers", "job_queue_capacity",
        "outbound_max_frames", "outbound_max_bytes", "max_in_flight_per_connection", "send_burst",
        "send_rate_per_second", "listener_poll_interval", "heartbeat_interval", "recent_window", "shutdown_grace",
        "node_id", "ops_token", "metrics_require_token", "service_threads", "event_loop", "max_connections",
        "max_connections_per_user", "header_timeout", "idle_timeout", "write_stall_timeout", "tls_cert", "tls_key",
        "duplicate_window_minutes",
        "escalate_after_minutes", "max_escalation_rounds", "escalation_interval_seconds",
        "push_vapid_key", "push_contact", "smtp_url", "email_from", "email_after_seconds", "public_url",
        "delivery_ca_file", "delivery_concurrency_per_host", "delivery_threads",
    ]

    static func load(path: String) throws -> ConfigFile {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw CommandFailure("cannot read config file \(path)")
        }
        return try parse(text, path: path)
    }

    static func parse(_ text: String, path: String) throws -> ConfigFile {
        let loaded: Any?
        do {
            loaded = try Yams.load(yaml: text)
        } catch {
            throw CommandFailure("config file \(path) is not valid YAML: \(oneLine(error))")
        }
        var file = ConfigFile(path: path)
        guard let root = loaded else { return file }
        guard let map = root as? [String: Any] else { throw CommandFailure("config file \(path) must be a mapping of key: value") }
        for key in map.keys.sorted() where !keys.contains(key) {
            throw CommandFailure("config file \(path): unknown key '\(key)' (known keys: \(keys.sorted().joined(separator: ", ")))")
        }
        func string(_ key: String) throws -> String? {
            guard let v = map[key], !(v is NSNull) else { return nil }
            guard let s = v as? String else { throw CommandFailure("config file \(path): '\(key)' must be text") }
            return s
        }
        func int(_ key: String, _ range: ClosedRange<Int>) throws -> Int? {
            guard let v = map[key], !(v is NSNull) else { return nil }
            guard let i = v as? Int, range.contains(i) else {
                throw CommandFailure("config file \(path): '\(key)' must be a whole number from \(range.lowerBound) to \(range.upperBound)")
            }
            return i
        }
        func double(_ key: String, _ range: ClosedRange<Double>) throws -> Double? {
            guard let v = map[key], !(v is NSNull) else { return nil }
            let d = (v as? Double) ?? (v as? Int).map(Double.init)
            guard let d, range.contains(d) else {
                throw CommandFailure("config file \(path): '\(key)' must be a number from \(range.lowerBound) to \(range.upperBound)")
            }
            return d
        }
        file.listen = try string("listen")
        file.databaseURL = try string("database_url")
        file.migrateDatabaseURL = try string("migrate_database_url")
        file.dataDir = try string("data_dir")
        file.logLevel = try string("log_level")
        file.logFormat = try string("log_format")
        if let f = file.logFormat, f != "text" && f != "json" {
            throw CommandFailure("config file \(path): 'log_format' must be text or json")
        }
        var s = ServerConfiguration()
        if let v = try int("database_workers", 1...64) { s.databaseWorkers = v }
        if let v = try int("job_queue_capacity", 1...1_000_000) { s.jobQueueCapacity = v }
        if let v = try int("outbound_max_frames", 16...1_000_000) { s.outboundMaxFrames = v }
        if let v = try int("outbound_max_bytes", 65_536...1 << 30) { s.outboundMaxBytes = v }
        if let v = try int("max_in_flight_per_connection", 1...10_000) { s.maxInFlightPerConnection = v }
        if let v = try double("send_burst", 1...100_000) { s.sendBurst = v }
        if let v = try double("send_rate_per_second", 0.01...100_000) { s.sendRatePerSecond = v }
        if let v = try double("listener_poll_interval", 0.1...300) { s.listenerPollInterval = v }
        if let v = try int("heartbeat_interval", 1...3_600) { s.heartbeatInterval = v }
        if let v = try int("recent_window", 16...1_000_000) { s.recentWindow = v }
        if let v = try double("shutdown_grace", 0...60) { s.shutdownGrace = v }
        if let v = try string("node_id") { s.nodeID = v }
        if let v = try int("service_threads", 0...256) { s.serviceThreads = v }
        if let v = try string("event_loop") {
            guard let kind = EventLoopKind(rawValue: v) else {
                throw CommandFailure("config file \(path): 'event_loop' must be ev (libev on epoll, the default) or poll (libwebsockets' own poll())"
                    + (v == "uv" ? "; uv is not offered: Debian's libwebsockets 4.1.6 libuv plugin closes a descriptor twice at shutdown" : ""))
            }
            s.eventLoop = kind
        }
        if let v = try int("max_connections", 1...10_000_000) { s.maxConnections = v }
        if let v = try int("max_connections_per_user", 1...10_000_000) { s.maxConnectionsPerUser = v }
        if let v = try double("header_timeout", 0.5...600) { s.headerTimeout = v }
        if let v = try double("idle_timeout", 1...3_600) { s.idleTimeout = v }
        if let v = try double("write_stall_timeout", 1...3_600) { s.writeStallTimeout = v }
        if let v = try int("duplicate_window_minutes", 0...1_440) { s.duplicateWindowMinutes = v }
        // Emergencies: the default escalation of an emergency (0: none), rounds at most, and the
        // test/ops knob that makes every interval this many seconds.
        if let v = try int("escalate_after_minutes", 0...1_440) { s.escalation.emergencyDefaultMinutes = v == 0 ? nil : v }
        if let v = try int("max_escalation_rounds", 1...100) { s.escalation.maxRounds = v }
        if let v = try int("escalation_interval_seconds", 1...86_400) { s.escalation.intervalSecondsOverride = v }
        if let v = try string("ops_token") {
            // An empty secret would open status to anyone who sends an empty bearer token.
            guard v.trimmingCharacters(in: .whitespaces).count >= 16 else {
                throw CommandFailure("config file \(path): 'ops_token' must be at least 16 characters (it guards /v1/status); leave it out to have none")
            }
            s.opsToken = v
        }
        // Reaching staff: Web Push, email, webhooks (docs/operations.md).
        s.reach.pushVapidKey = try string("push_vapid_key")
        if let v = try string("push_contact") {
            guard v.hasPrefix("mailto:") || v.hasPrefix("https://") else {
                throw CommandFailure("config file \(path): 'push_contact' must be a mailto: or https: URL (push services use it to reach you)")
            }
            s.reach.pushContact = v
        }
        if let v = try string("smtp_url") {
            guard let u = URLComponents(string: v), ["smtp", "smtps"].contains(u.scheme?.lowercased() ?? ""), u.host?.isEmpty == false else {
                throw CommandFailure("config file \(path): 'smtp_url' must be smtp://[user:password@]host:port (or smtps://)")
            }
            s.reach.smtpURL = v
        }
        if let v = try string("email_from") {
            guard v.contains("@"), !v.contains(where: { $0 == "<" || $0 == ">" || $0.isWhitespace }) else {
                throw CommandFailure("config file \(path): 'email_from' must be a bare address such as staffcast@example.org")
            }
            s.reach.emailFrom = v
        }
        if let v = try int("email_after_seconds", 1...86_400) { s.reach.emailAfterSeconds = v }
        if let v = try string("public_url") {
            guard let u = URL(string: v), ["http", "https"].contains(u.scheme ?? ""), u.host != nil else {
                throw CommandFailure("config file \(path): 'public_url' must be an http(s) URL such as https://staffcast.example.org")
            }
            s.reach.publicURL = v
        }
        s.reach.caFile = try string("delivery_ca_file")
        if let v = try int("delivery_concurrency_per_host", 1...256) { s.reach.concurrencyPerHost = v }
        if let v = try int("delivery_threads", 1...256) { s.reach.threads = v }
        s.tlsCertificate = try string("tls_cert")
        s.tlsKey = try string("tls_key")
        if let v = map["metrics_require_token"] {
            guard let b = v as? Bool else { throw CommandFailure("config file \(path): 'metrics_require_token' must be true or false") }
            s.metricsRequireToken = b
        }
        file.server = s
        return file
    }
}
