/// The policy knobs of one `FanoutEngine`: queue bounds, rate limits, heartbeats and deadlines.
/// Every duration is in seconds. Defaults are the configuration keys' (`ConfigKey+All.swift`);
/// the server sets them from its `ServerConfiguration.engine`.
public struct EngineConfiguration: Sendable, Equatable {
    /// Frames and bytes waiting for one connection. When a push would pass either bound the
    /// client does not keep up: it is closed with 4008 and catches up on reconnect.
    public var outboundMaxFrames = ConfigKey.outboundMaxFrames.defaultInteger
    public var outboundMaxBytes = ConfigKey.outboundMaxBytes.defaultInteger
    /// Requests one connection may have waiting on the database; at this many the transport
    /// stops reading the connection until answers come back (back-pressure, not a refusal).
    public var maxInFlightPerConnection = ConfigKey.maxInFlightPerConnection.defaultInteger
    /// Requests read after reading stopped (what the transport had already buffered), held
    /// until the window has room; past this many they get `rate_limited`.
    public var maxHeldPerConnection = 256
    /// `send` ops one connection may make: a burst, then this many a second.
    public var sendBurst = ConfigKey.sendBurst.defaultNumber
    public var sendRatePerSecond = ConfigKey.sendRatePerSecond.defaultNumber
    /// Silence after which a connection is pinged; twice this and it is closed (1001).
    public var heartbeatInterval = Double(ConfigKey.heartbeatInterval.defaultInteger)
    /// A connection whose queued frames make no progress for this long is dropped: its peer
    /// does not read (a receive window that stays shut), and its memory is released.
    public var writeStallTimeout = ConfigKey.writeStallTimeout.defaultNumber
    /// How long a close may wait for its writable callback before the socket is dropped.
    public var closeTimeout = 2.0
    /// Live messages remembered to line up subscribes with fan-out (see `Hub`).
    public var recentWindow = ConfigKey.recentWindow.defaultInteger
    /// This server's name, sent in `hello`.
    public var nodeID = "staffcast"
    /// Most bytes one writable callback hands to the transport (several frames, one write).
    public var maxWriteBytes = 64 << 10
    /// How long `hello` waits for the answer to a subscribe in the upgrade's URL
    /// (`URLSubscribe`), so that the `101`, `hello` and `subscribed` leave in one write; the
    /// hold ends on the first tick after it (ticks are a second apart). A slower answer (a
    /// busy database) follows on its own; the client sees `hello` by then.
    public var urlSubscribeHold = 1.0

    public init() {}
}
