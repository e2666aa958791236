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

    public static func + (a: EngineStats, b: EngineStats) -> EngineStats {
        var s = a
        s.connectionsOpened += b.connectionsOpened
        s.connectionsClosed += b.connectionsClosed
        s.framesDelivered += b.framesDelivered
        s.messagesFannedOut += b.messagesFannedOut
        s.slowClientsClosed += b.slowClientsClosed
        s.stalledClientsDropped += b.stalledClientsDropped
        s.heartbeatTimeouts += b.heartbeatTimeouts
        s.tokenRevocationsClosed += b.tokenRevocationsClosed
        return s
    }
}
