import Foundation
import StaffcastCore

/// Everything a staffcast server can be told, with the defaults it uses when told nothing.
/// Each setting is a `ConfigKey` (StaffcastCore, `ConfigKey+All.swift`): its default, range and
/// documentation are declared there once; `init(_:)` (ServerConfiguration+Settings.swift) fills this from them.
public struct ServerConfiguration: Sendable, Equatable {
    /// Address to listen on; "0.0.0.0" (every IPv4 interface) so staff devices on the event
    /// network can connect, "127.0.0.1" for this machine only.
    public var host = ConfigKey.splitHostPort(ConfigKey.listen.defaultText)?.host ?? "0.0.0.0"
    /// TCP port for the WebSocket and the HTTP API; 0 picks a free one (tests).
    public var port = ConfigKey.splitHostPort(ConfigKey.listen.defaultText)?.port ?? 8080
    /// Threads (each with one PostgreSQL connection) that run requests off the service thread.
    public var databaseWorkers = ConfigKey.databaseWorkers.defaultInteger
    /// Requests waiting for a database worker; past this, requests are refused with
    /// `unavailable` at once instead of queueing without bound.
    public var jobQueueCapacity = ConfigKey.jobQueueCapacity.defaultInteger
    /// Frames waiting to be written to one client; past either bound the client is too slow
    /// and is closed with code 4008 (it reconnects and catches up with `since_seq`).
    public var outboundMaxFrames = ConfigKey.outboundMaxFrames.defaultInteger
    public var outboundMaxBytes = ConfigKey.outboundMaxBytes.defaultInteger
    /// Requests one connection may have waiting on the database at once; at this many the
    /// server stops reading the connection until answers come back (back-pressure).
    public var maxInFlightPerConnection = ConfigKey.maxInFlightPerConnection.defaultInteger
    /// Messages one connection may send: a burst, then this many per second.
    public var sendBurst = ConfigKey.sendBurst.defaultNumber
    public var sendRatePerSecond = ConfigKey.sendRatePerSecond.defaultNumber
    /// Replies and poll answers one user may send (all connections and HTTP calls together):
    /// a burst, then this many per minute (`ReplyLimiter`).
    public var replyBurst = ConfigKey.replyBurst.defaultNumber
    public var replyRatePerMinute = ConfigKey.replyRatePerMinute.defaultNumber
    /// Seconds between change-log reads when no notification arrives (safety net only).
    public var listenerPollInterval = ConfigKey.listenerPollInterval.defaultNumber
    /// Seconds of silence after which the server pings a WebSocket; a connection silent for
    /// twice this is closed.
    public var heartbeatInterval = ConfigKey.heartbeatInterval.defaultInteger
    /// Live messages kept to line up subscribes with fan-out (see `Hub`).
    public var recentWindow = ConfigKey.recentWindow.defaultInteger
    /// Seconds a graceful stop waits for clients to take their close frames.
    public var shutdownGrace = ConfigKey.shutdownGrace.defaultNumber
    /// This server's name in logs, `hello` and status; defaults to host name and pid.
    public var nodeID = ServerConfiguration.defaultNodeID()
    /// A shared secret that opens `/v1/status` (and `/metrics` when `metricsRequireToken`) to
    /// monitoring without a user token. Nil: status is for event owners only.
    public var opsToken: String?
    /// When true, `/metrics` needs the ops token as a bearer token.
    public var metricsRequireToken = ConfigKey.metricsRequireToken.defaultFlag
    /// When true, a batch of sends this server committed goes to its own loops at once, ahead of
    /// the change feed whenever `LocalFanoutGate` allows (`ChangeFeed.handOn`).
    public var localFanout = ConfigKey.localFanout.defaultFlag
    /// Service loops (threads), each with its own libwebsockets context and its share of the
    /// connections; 0 means one per core.
    public var serviceThreads = ConfigKey.serviceThreads.defaultInteger
    /// How each service loop waits for its sockets: libev on epoll, or libwebsockets' poll().
    public var eventLoop = EventLoopKind(rawValue: ConfigKey.eventLoop.defaultText) ?? .ev
    /// WebSockets open at once on this server; past it an upgrade is refused with 503.
    public var maxConnections = ConfigKey.maxConnections.defaultInteger
    /// WebSockets one user may have open at once on this server; past it, 429.
    public var maxConnectionsPerUser = ConfigKey.maxConnectionsPerUser.defaultInteger
    /// Seconds a client has to send a whole request head (and a body once it started).
    public var headerTimeout = ConfigKey.headerTimeout.defaultNumber
    /// Seconds a keep-alive HTTP connection may sit idle between requests.
    public var idleTimeout = ConfigKey.idleTimeout.defaultNumber
    /// Seconds a WebSocket may leave queued frames unread before it is dropped and its memory
    /// released (a reader whose receive window stays shut).
    public var writeStallTimeout = ConfigKey.writeStallTimeout.defaultNumber
    /// Reminders and escalation: the emergency default (`escalate_after_minutes`, 5),
    /// `max_escalation_rounds` (3), and the test/ops knob `escalation_interval_seconds`.
    public var escalation = EscalationPolicy()
    /// The double-send guard: the same text to the same event within this many minutes is
    /// refused with `conflict` unless the send says `force`. 0 turns the guard off.
    public var duplicateWindowMinutes = ConfigKey.duplicateWindowMinutes.defaultInteger
    /// PEM files of the certificate (chain) and its private key. Both set: the one port speaks
    /// only TLS (`https://`, `wss://`); neither: plain HTTP. Read once at start.
    public var tlsCertificate: String?
    public var tlsKey: String?
    /// Web Push, email and webhooks (`push_vapid_key`, `smtp_url`, …; see `ReachConfiguration`).
    public var reach = ReachConfiguration()

    public init() {}

    /// True when the port serves TLS.
    public var tlsEnabled: Bool { tlsCertificate != nil && tlsKey != nil }

    public static func defaultNodeID() -> String {
        "\(ProcessInfo.processInfo.hostName.split(separator: ".").first.map(String.init) ?? "staffcast")-\(ProcessInfo.processInfo.processIdentifier)"
    }
}

extension ServerConfiguration {
    /// The fan-out engine's policy, from these settings.
    public var engine: EngineConfiguration {
        var e = EngineConfiguration()
        e.outboundMaxFrames = outboundMaxFrames
        e.outboundMaxBytes = outboundMaxBytes
        e.maxInFlightPerConnection = maxInFlightPerConnection
        e.sendBurst = sendBurst
        e.sendRatePerSecond = sendRatePerSecond
        e.heartbeatInterval = Double(heartbeatInterval)
        e.writeStallTimeout = writeStallTimeout
        e.recentWindow = recentWindow
        e.nodeID = nodeID
        return e
    }

    /// Service loops to run: `serviceThreads`, or one per core when 0.
    public var resolvedServiceThreads: Int {
        serviceThreads > 0 ? serviceThreads : max(1, ProcessInfo.processInfo.activeProcessorCount)
    }
}
