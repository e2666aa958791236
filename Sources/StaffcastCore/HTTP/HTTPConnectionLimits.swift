/// The rules one HTTP connection is held to (`HTTPConnectionMachine`): its deadlines, how
/// many requests may wait for answers, and how much it may buffer.
public struct HTTPConnectionLimits: Sendable, Equatable {
    /// Seconds for a request (head and body) to arrive whole, counted from its first byte
    /// (from the accept for the first request, the TLS handshake included): past it, 408.
    public var headerTimeout: Double
    /// Seconds a kept-alive connection may sit with nothing to do before it is closed.
    public var idleTimeout: Double
    /// Seconds an answer may wait without a byte leaving before the connection is reset.
    public var writeStallTimeout: Double
    /// Requests framed and waiting for their answers; past it nothing more is framed.
    public var maxPipelined: Int
    /// Bytes read and not yet framed; past it the connection is not read until answers go
    /// out (the parser refuses anything larger than a head plus a body anyway).
    public var maxBuffered: Int
    /// Answer bytes waiting to leave; at or past it no further request is framed until they
    /// have gone out. A client that pipelines requests and never reads its answers holds at
    /// most this, the answers of `maxPipelined` requests and `maxBuffered` unread bytes.
    public var maxQueuedOutput: Int
    /// An upgrade request (with whatever followed it) larger than this is refused with 431. As
    /// large as any request head: a browser's upgrade carries the site's cookies, which can be
    /// kilobytes when staffcast runs under an organisation's domain.
    public var maxUpgradeBytes: Int
    /// Where WebSockets connect; an upgrade anywhere else is refused with 404.
    public var upgradePath: String

    public init(headerTimeout: Double = 10, idleTimeout: Double = 60, writeStallTimeout: Double = 15,
                maxPipelined: Int = 16, maxBuffered: Int = 8_192 + Limits.maxFrameBytes + 16_384,
                maxQueuedOutput: Int = 256 * 1_024, maxUpgradeBytes: Int = 8_192, upgradePath: String = "/v1/ws") {
        self.headerTimeout = headerTimeout
        self.idleTimeout = idleTimeout
        self.writeStallTimeout = writeStallTimeout
        self.maxPipelined = maxPipelined
        self.maxBuffered = maxBuffered
        self.maxQueuedOutput = maxQueuedOutput
        self.maxUpgradeBytes = maxUpgradeBytes
        self.upgradePath = upgradePath
    }
}
