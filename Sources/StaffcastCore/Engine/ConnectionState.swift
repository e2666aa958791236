import Foundation

/// One open WebSocket as the engine sees it: who it is, what waits to be written, what it
/// asked for, and its heartbeat. Owned by the engine (so by its service loop's thread).
public final class ConnectionState<Frame: WireFrame> {
    public enum Phase: Equatable {
        case open
        /// Closing with this code: at once (`afterFlush` false) or after its queue is written
        /// and its requests are answered; dropped if not closed by `deadline` (monotonic s).
        case closing(code: UInt16, reason: String, afterFlush: Bool, deadline: Double)
    }

    public let id: Int
    public let identity: Identity
    /// The digest of the token it connected with, to close it when that token is revoked.
    public let token: TokenDigest?
    public let peer: String
    public let openedAt: Date
    public internal(set) var phase: Phase = .open
    var outbound: OutboundQueue<Frame>
    /// Fragments of the frame being received, and whether it already passed the limit.
    var rx: [UInt8] = []
    var rxOverflow = false
    /// Requests waiting on the database.
    public internal(set) var inFlight = 0
    /// Requests read while `inFlight` was at its bound, in arrival order (`FanoutEngine+BackPressure`).
    var held: [HeldRequest] = []
    /// True while the transport has been asked to stop reading this socket.
    public internal(set) var readingPaused = false
    /// Subscribe requests in flight per event; an unsubscribe in between cancels them.
    var pendingSubscribes: [UUID: Int] = [:]
    /// The user's level on each event this connection is subscribed to (kept current by
    /// access changes): who gets `receipt` frames.
    public internal(set) var levels: [UUID: AccessLevel] = [:]
    var sendBucket: TokenBucket
    public internal(set) var framesWritten = 0
    /// Heartbeat (monotonic seconds): last time anything arrived, whether a ping waits to be
    /// written, when the outstanding one left, and the last round trip.
    var lastHeard: Double
    var pingDue = false
    var pingSentAt: Double?
    public internal(set) var lastRTT: Double?
    /// When queued frames last made progress (or the queue turned non-empty): a deadline
    /// for readers that stop reading.
    var lastWriteProgress: Double
    /// True while the transport holds bytes of a write the socket did not take yet.
    var transportBacklog = false
    /// Bytes the kernel held unacknowledged at the last sample (`socketQueued`).
    var socketQueued = 0
    /// True while a writable callback has been asked for and not yet served.
    var writableRequested = false
    /// Until when (monotonic s) what is queued waits for the answer to a subscribe in the
    /// upgrade's URL, so that `hello` and that answer leave together; nil once writes may go.
    var writesHeldUntil: Double?

    init(id: Int, identity: Identity, token: TokenDigest?, peer: String, configuration: EngineConfiguration,
         now: Double, wall: Date) {
        self.id = id
        self.identity = identity
        self.token = token
        self.peer = peer
        self.openedAt = wall
        self.outbound = OutboundQueue(maxFrames: configuration.outboundMaxFrames, maxBytes: configuration.outboundMaxBytes)
        self.sendBucket = TokenBucket(perSecond: configuration.sendRatePerSecond, burst: configuration.sendBurst, now: now)
        self.lastHeard = now
        self.lastWriteProgress = now
    }

    public var queuedFrames: Int { outbound.count }
    public var queuedBytes: Int { outbound.bytes }
    public var isOpen: Bool { phase == .open }
    /// Requests read but not yet run (the window was full).
    public var heldRequests: Int { held.count }
}
