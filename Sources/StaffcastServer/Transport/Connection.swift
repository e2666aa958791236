import CLibWebSockets
import Foundation
import StaffcastCore

/// One open WebSocket. Owned by the service thread: created in `LWS_CALLBACK_ESTABLISHED`,
/// dropped in `LWS_CALLBACK_CLOSED`; nothing else touches it.
final class Connection {
    enum Closing {
        /// Close now, dropping what is queued (slow client, protocol violation).
        case immediately(UInt16, String)
        /// Write what is queued, then close (graceful shutdown, revoked token).
        case afterFlush(UInt16, String)
    }

    let id: Int
    let wsi: OpaquePointer
    let identity: Identity
    let openedAt = Date()
    let peer: String
    var outbound: OutboundQueue<OutFrame>
    var closing: Closing?
    /// Fragments of the frame being received.
    var rx: [UInt8] = []
    var rxOverflow = false
    /// Requests waiting on the database.
    var inFlight = 0
    /// Subscribe requests in flight per event; an unsubscribe in between cancels them.
    var pendingSubscribes: [UUID: Int] = [:]
    var sendBucket: TokenBucket
    var framesWritten = 0
    /// Heartbeat state (monotonic seconds): when the peer last sent anything, whether a ping
    /// is due to be written, when the outstanding ping went out, and the last round trip.
    var lastHeard: Double
    var pingDue = false
    var pingSentAt: Double?
    var lastRTT: Double?

    init(id: Int, wsi: OpaquePointer, identity: Identity, peer: String, configuration: ServerConfiguration, now: Double) {
        self.id = id
        self.wsi = wsi
        self.identity = identity
        self.peer = peer
        self.outbound = OutboundQueue(maxFrames: configuration.outboundMaxFrames, maxBytes: configuration.outboundMaxBytes)
        self.sendBucket = TokenBucket(perSecond: configuration.sendRatePerSecond, burst: configuration.sendBurst, now: now)
        self.lastHeard = now
    }
}
