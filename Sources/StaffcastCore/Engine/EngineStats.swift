/// Counters of one engine since it started; the server sums them over its loops for status
/// and metrics.
public struct EngineStats: Sendable, Equatable {
    public var connectionsOpened = 0
    public var connectionsClosed = 0
    public var framesDelivered = 0
    public var messagesFannedOut = 0
    public var slowClientsClosed = 0
    public var stalledClientsDropped = 0
    public var heartbeatTimeouts = 0
    public var tokenRevocationsClosed = 0

    public init() {}

    /// Every counter, once: the sum below goes over these (a new counter is added here too).
    /// (Computed: key paths are not Sendable; the sum runs for status and metrics, not per frame.)
    public static var counters: [WritableKeyPath<EngineStats, Int>] {
        [\.connectionsOpened, \.connectionsClosed, \.framesDelivered, \.messagesFannedOut,
         \.slowClientsClosed, \.stalledClientsDropped, \.heartbeatTimeouts, \.tokenRevocationsClosed]
    }

    public static func + (a: EngineStats, b: EngineStats) -> EngineStats {
        var s = a
        for counter in counters { s[keyPath: counter] += b[keyPath: counter] }
        return s
    }
}
