/// What `/readyz` says, and the whole of it: short words, never an error text, a host name or
/// a socket path (anyone may ask).
public struct Readiness: Sendable, Equatable, Encodable {
    public var ready: Bool
    /// "up": a round trip to the database completed recently; "down" otherwise.
    public var database: String
    /// "listening": the change listener is reading the change logs; "behind": it is connected
    /// but has not completed a read for too long; else its state ("starting", "reconnecting",
    /// "stopped").
    public var listener: String
    /// The server's lifecycle ("running", or "starting", "draining", …).
    public var state: String
}

/// When a server is ready for traffic: it is running, a database round trip completed within
/// the probe's last few seconds, and the change listener completed a read of the change logs
/// within its poll interval (plus slack). Pure: the caller passes the times (monotonic
/// seconds) that the probe and the listener recorded.
public struct ReadinessRule: Sendable, Equatable {
    /// Seconds between probe round trips, and how long one may take.
    public var probeInterval: Double
    public var probeDeadline: Double
    /// Seconds between the listener's reads when no notification wakes it.
    public var listenerPollInterval: Double

    public init(probeInterval: Double = 1, probeDeadline: Double = 2, listenerPollInterval: Double = 2) {
        self.probeInterval = probeInterval
        self.probeDeadline = probeDeadline
        self.listenerPollInterval = listenerPollInterval
    }

    /// A healthy probe completes one round trip every `probeInterval` at most `probeDeadline`
    /// late; older than this, the database is down.
    public var databaseStaleAfter: Double { probeInterval + probeDeadline + 0.5 }
    /// A following listener reads at least every `listenerPollInterval` (one read may take up
    /// to a probe deadline); older than this, it is stuck.
    public var listenerStaleAfter: Double { listenerPollInterval + probeDeadline + 1 }

    public func judge(now: Double, state: String, lastProbe: Double?, listenerState: String, lastRead: Double?) -> Readiness {
        let databaseUp = lastProbe.map { now - $0 <= databaseStaleAfter } ?? false
        var listener = listenerState
        if listenerState == "listening", !(lastRead.map { now - $0 <= listenerStaleAfter } ?? false) { listener = "behind" }
        return Readiness(ready: state == "running" && databaseUp && listener == "listening",
                         database: databaseUp ? "up" : "down", listener: listener, state: state)
    }
}
