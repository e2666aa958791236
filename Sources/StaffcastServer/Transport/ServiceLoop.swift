import CLibWebSockets
import CStaffcastSocket
import Foundation
import Logging
import StaffcastCore
import Synchronization

/// One service loop: a thread with its own libwebsockets context, its own listening socket
/// (SO_REUSEPORT: the kernel spreads new connections over the loops), its own HTTP connections,
/// and its own `FanoutEngine`, the share of the hub for the WebSockets it holds.
///
/// It only translates: socket and libwebsockets events become engine events, and the engine's
/// actions become socket calls. Every property belongs to the loop's thread, except the inbox:
/// other threads (database workers, the change feed, the ticker) hand work in with `post`,
/// which appends under a lock and wakes the loop with `lws_cancel_service`.
///
/// HTTP runs on the loop's own epoll set, which libwebsockets watches as a raw file, by the rules
/// of each connection's `HTTPConnectionMachine` (`+HTTPFront`); a WebSocket upgrade that the
/// gatekeeper admits stays on that socket (over TLS, on its TLS wsi) and is framed by
/// staffcast (`ServiceLoop+FramedWebSockets`, `+PlainSockets`); a refused one gets a whole
/// HTTP/1.1 response (400, 401, 429, 503) before the socket closes. libwebsockets serves the
/// loop (libev or poll), its wake-ups, and TLS.
final class ServiceLoop: @unchecked Sendable {
    typealias Work = @Sendable (ServiceLoop) -> Void

    let index: Int
    let configuration: ServerConfiguration
    let logger: Logger
    let metrics: ServerMetrics
    let gatekeeper: Gatekeeper
    let runner: JobRunner
    let api: HTTPAPI
    /// Looks up tokens the gatekeeper does not know yet, off this thread.
    let resolver: TokenResolver

    // Shared with other threads.
    let inbox = Mutex<LoopInbox>(LoopInbox())
    /// HTTP connections (TLS handshakes included) and WebSockets held, as of the last tick
    /// (read by the ticker's `MemoryTrimPolicy`).
    let held = Mutex<Int>(0)

    // The loop's thread only.
    private(set) var engine: FanoutEngine<OutFrame>
    var lws: LWSContext?
    var poller: EventPoller?
    var listenFD: Int32 = -1
    /// Accepting paused for want of descriptors (`pauseAccepting`) until the next tick.
    var acceptPaused = false
    var http: [Int32: HTTPConnection] = [:]
    var nextSerial = 1
    /// Open WebSockets (ws and wss), by connection id.
    var sockets: [Int: FramedWebSocket] = [:]
    var nextConnection = 1
    /// Subscribe jobs gathered until `flushSubscribes` runs from the loop's backlog (or, while
    /// `maxSubscribeBatchesInFlight` batches are out, until one comes back). Bounded by the
    /// connections: each has at most `max_in_flight_per_connection` requests out.
    var subscribes: [DatabaseJob] = []
    /// This loop's subscribe batches on the database workers now (`flushSubscribes`).
    var subscribeBatchesInFlight = 0
    /// Sends read during this turn of the loop: handed to the group commit together when the
    /// turn ends (`turnEnded`, `flushSends`), so the sends of one turn join one batch.
    var gatheredSends: [GatheredSend] = []
    /// Work taken from the inbox's `work` lane and not yet run (`drainInbox`); `backlogHead`
    /// is the next item. Bounded by what the inbox's lane is (see `LoopInbox`).
    var backlog: [Work] = []
    var backlogHead = 0
    var writeBuffer: UnsafeMutablePointer<UInt8>
    /// TLS only: HTTP connections by their TLS wsi (`ServiceLoop+TLS`).
    var tlsHTTP: [UInt: HTTPConnection] = [:]
    /// TLS WebSockets, by their wsi (`ServiceLoop+FramedWebSockets`).
    var framed: [UInt: FramedWebSocket] = [:]
    /// Plain WebSockets, by their descriptor in the epoll set (`ServiceLoop+PlainSockets`).
    var plainFramed: [Int32: FramedWebSocket] = [:]
    /// Plain WebSockets to write at the end of this turn (`writeAskedSockets`); each once
    /// (`FramedWebSocket.writeAsked`), so bounded by the loop's connections.
    var writeSoon: [FramedWebSocket] = []
    /// Plain WebSockets asked to write by a group commit's answer (`sent`, `read`, `answered`:
    /// the answers lane): written before `writeSoon` at the end of the turn, so that a
    /// publisher's acknowledgement does not wait behind its own batch's fan-out to every
    /// subscriber of the loop. Each once, as above.
    var writeFirst: [FramedWebSocket] = []
    /// True while an answer of the answers lane is performed (`jobAnswered`): its writes go to
    /// `writeFirst`.
    var answering = false
    /// Answers run in this turn of the loop, against `answersPerTurn`, and whether the loop
    /// already woke itself for the rest (`runAnswers`).
    var answersThisTurn = 0
    var answersWakeAsked = false
    /// Plain WebSockets ended this turn, closed and forgotten at its end.
    var endedPlain: [FramedWebSocket] = []
    /// The scratch buffer (LWS_PRE in front) for bytes written whole through libwebsockets:
    /// TLS records of HTTP answers, and WebSocket control frames.
    let tlsBuffer: UnsafeMutablePointer<UInt8>
    /// Where plain HTTP sockets are read into (`read`), once per loop instead of per read.
    let readBuffer: UnsafeMutableRawBufferPointer
    var draining = false
    var exitRequested = false
    /// When the client frame being handed to the engine arrived (wall clock; `MessageTracer`).
    var frameReceivedAt = 0.0
    /// The traced message whose writes this loop is waiting for (`MessageTracer`).
    var writeTrace: LoopWriteTrace?

    init(index: Int, configuration: ServerConfiguration, publishedThrough: Int64, changedThrough: Int64, logger: Logger, metrics: ServerMetrics,
         gatekeeper: Gatekeeper, resolver: TokenResolver, runner: JobRunner, api: HTTPAPI) {
        self.index = index
        self.configuration = configuration
        self.logger = logger
        self.metrics = metrics
        self.gatekeeper = gatekeeper
        self.runner = runner
        self.api = api
        self.resolver = resolver
        self.engine = FanoutEngine(configuration: configuration.engine, publishedThrough: publishedThrough, changedThrough: changedThrough)
        writeBuffer = .allocate(capacity: OutFrame.headroom + configuration.engine.maxWriteBytes)
        tlsBuffer = .allocate(capacity: staffcast_lws_pre() + Self.tlsChunk)
        readBuffer = .allocate(byteCount: 16_384, alignment: 16)
    }

    deinit {
        writeBuffer.deallocate()
        tlsBuffer.deallocate()
        readBuffer.deallocate()
    }

    // MARK: any thread

    static func monotonicNow() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    // MARK: the thread

    /// Opens the listening socket (port 0 picks one; the other loops then share it).
    func listen(host: String, port: Int) throws(SocketError) -> Int {
        let bindHost = host.isEmpty ? "0.0.0.0" : host
        listenFD = Int32(try SocketError.check(sc_listen(bindHost, Int32(port), 4_096), "cannot listen on \(host):\(port)"))
        return Int(try SocketError.check(sc_local_port(listenFD), "getsockname"))
    }

    /// True when someone already listens on host:port, a socket with SO_REUSEPORT included
    /// (another staffcast): a probe bound without SO_REUSEPORT is refused there.
    static func isInUse(host: String, port: Int) -> Bool {
        sc_probe_port(host.isEmpty ? "0.0.0.0" : host, Int32(port)) == -EADDRINUSE
    }

    /// The thread's body: creates the context, reports through `started`, serves until `stop`.
    func run(started: @escaping @Sendable (SocketError?) -> Void) {
        do throws(SocketError) {
            let lws = try LWSContext(loop: self)
            let poller = try EventPoller()
            try lws.watch(poller.fd)
            poller.handOverDescriptor() // libwebsockets closes it with the context
            try poller.add(listenFD)
            self.lws = lws
            self.poller = poller
            inbox.withLock { $0.context = UInt(bitPattern: lws.context) }
        } catch {
            started(error)
            return
        }
        started(nil)
        lws?.serve { !exitRequested }
        inbox.withLock { $0.context = 0 }
        // TLS connections' descriptors belong to libwebsockets (closed by `destroy`).
        for connection in http.values where connection.tls == nil { _ = sc_close(connection.fd) }
        closeEveryPlain()
        http.removeAll()
        tlsHTTP.removeAll()
        if listenFD >= 0 { _ = sc_close(listenFD) }
        listenFD = -1
        lws?.destroy() // closes every TLS WebSocket; CLOSED callbacks release their slots
        lws = nil
        poller = nil
        let leftovers = inbox.withLock { box -> [Work] in
            defer { box.live.removeAll(); box.work.removeAll(); box.answers.removeAll() }
            return box.live + box.work + box.answers
        }
        _ = leftovers // frames held by work that will never run are released here
        backlog.removeAll()
        backlogHead = 0
    }

    /// Asks the loop to leave its event loop (`lws_service` or libev's) and close everything.
    func requestExit() {
        post { loop in
            loop.exitRequested = true
            loop.lws?.interrupt()
        }
    }

    // MARK: libwebsockets callbacks

    func handle(_ wsi: OpaquePointer, _ reason: lws_callback_reasons, _ user: UnsafeMutableRawPointer?,
                _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
        switch reason {
        case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
            drainInbox()
            return 0
        case LWS_CALLBACK_RAW_RX_FILE:
            serviceSockets()
            return 0
        case LWS_CALLBACK_RAW_ADOPT_FILE, LWS_CALLBACK_RAW_CLOSE_FILE, LWS_CALLBACK_RAW_WRITEABLE_FILE, LWS_CALLBACK_RAW_ADOPT:
            return 0
        case LWS_CALLBACK_RAW_RX:
            if let socket = framed[UInt(bitPattern: wsi)] { return framedReceived(socket, input, length) }
            if let connection = tlsHTTP[UInt(bitPattern: wsi)] { return tlsReceived(connection, wsi, input, length) }
            return -1
        case LWS_CALLBACK_RAW_WRITEABLE:
            if let socket = framed[UInt(bitPattern: wsi)] { return framedWritable(socket) }
            if let connection = tlsHTTP[UInt(bitPattern: wsi)] {
                flush(connection)
                return 0
            }
            return -1
        case LWS_CALLBACK_RAW_CLOSE:
            tlsClosed(wsi)
            framedClosed(wsi)
            return 0
        case LWS_CALLBACK_WSI_DESTROY:
            if !tlsHTTP.isEmpty { tlsClosed(wsi) }
            if !framed.isEmpty { framedClosed(wsi) }
            return 0
        default:
            return lws_callback_http_dummy(wsi, reason, user, input, length)
        }
    }

    // MARK: time and shutdown

    /// Once a second: the engine's heartbeats and deadlines, and the HTTP deadlines.
    func tick() {
        let now = Self.monotonicNow()
        held.withLock { $0 = http.count + sockets.count }
        resumeAccepting()
        // Sample every socket's kernel send queue (one ioctl each) for the write-stall policy.
        // What we hold unsent counts too. A plain socket empty at its last sample with nothing
        // written since is still empty: skipped (the engine's stall clock restarts anyway when
        // its queue next fills: `FanoutEngine.enqueue`).
        for (id, socket) in sockets where !socket.ended && !socket.kernelQueueEmpty {
            let fd = descriptor(socket)
            guard fd >= 0 else { continue }
            let queued = Int(max(0, sc_send_queue(fd))) + socket.unsentCount
            engine.socketQueued(id, bytes: queued, now: now)
            if queued == 0, case .plain = socket.carrier { socket.kernelQueueEmpty = true }
        }
        framedTick(now: now)
        perform(engine.tick(now: now, wall: Date()))
        for connection in Array(http.values) { tick(connection, now: now) }
    }

    /// Graceful stop: no new connections, WebSockets flushed and closed with 1001, HTTP
    /// connections closed once their answers are out.
    func beginDrain() {
        draining = true
        if listenFD >= 0 {
            poller?.remove(listenFD)
            _ = sc_close(listenFD)
            listenFD = -1
        }
        for connection in Array(http.values) { perform(connection.machine.beginDrain(), on: connection) }
        perform(engine.beginDrain(now: Self.monotonicNow()))
    }

    var isDrained: Bool { draining && sockets.isEmpty && http.isEmpty }

    /// What this loop holds, for status, metrics and presence.
    func snapshot() -> LoopSnapshot {
        var members: [LoopSnapshot.Member] = []
        for (id, connection) in engine.connections {
            for event in engine.hub.events(of: id) {
                members.append(LoopSnapshot.Member(connectionID: id, userID: connection.identity.userID, eventID: event,
                                                   connectedSince: connection.openedAt, rtt: connection.lastRTT))
            }
        }
        return LoopSnapshot(index: index, connections: engine.connections.count, httpConnections: http.count,
                            subscribers: engine.hub.subscriberCounts, members: members, stats: engine.stats,
                            inboxDepth: inboxDepth + backlogDepth)
    }
}
