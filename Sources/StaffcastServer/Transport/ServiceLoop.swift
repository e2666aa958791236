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
/// Plain HTTP is framed here (`HTTPRequestParser`) on the loop's own epoll set, which
/// libwebsockets watches as a raw file; a WebSocket upgrade that the gatekeeper admits is handed
/// to libwebsockets with the bytes already read (`lws_adopt_socket_vhost_readbuf`), and a
/// refused one gets a whole HTTP/1.1 response (401, 429, 503) before the socket closes.
final class ServiceLoop: @unchecked Sendable {
    typealias Work = @Sendable (ServiceLoop) -> Void

    let index: Int
    private let configuration: ServerConfiguration
    private let logger: Logger
    private let metrics: ServerMetrics
    private let gatekeeper: Gatekeeper
    private let runner: JobRunner
    private let api: HTTPAPI
    private let parser = HTTPRequestParser()

    // Shared with other threads.
    private let inbox = Mutex<(items: [Work], context: UInt)>(([], 0))

    // The loop's thread only.
    private(set) var engine: FanoutEngine<OutFrame>
    private var lws: LWSContext?
    private var poller: EventPoller?
    private var listenFD: Int32 = -1
    private var http: [Int32: HTTPConnection] = [:]
    private var nextSerial = 1
    /// Admitted upgrades handed to libwebsockets, by descriptor, until the handshake is
    /// confirmed; then by wsi until `ESTABLISHED`. Stale ones are released by `tick`.
    private var adopted: [Int32: (admission: Gatekeeper.Admission, at: Double)] = [:]
    private var upgrading: [UInt: Gatekeeper.Admission] = [:]
    /// Open WebSockets: their wsi and the slot they hold.
    private var sockets: [Int: (wsi: OpaquePointer, admission: Gatekeeper.Admission)] = [:]
    private var nextConnection = 1
    /// Subscribe jobs gathered since the loop last drained its inbox (`flushSubscribes`).
    private var subscribes: [DatabaseJob] = []
    private var writeBuffer: UnsafeMutablePointer<UInt8>
    private var draining = false
    private var exitRequested = false

    init(index: Int, configuration: ServerConfiguration, publishedThrough: Int64, logger: Logger, metrics: ServerMetrics,
         gatekeeper: Gatekeeper, runner: JobRunner, api: HTTPAPI) {
        self.index = index
        self.configuration = configuration
        self.logger = logger
        self.metrics = metrics
        self.gatekeeper = gatekeeper
        self.runner = runner
        self.api = api
        self.engine = FanoutEngine(configuration: configuration.engine, publishedThrough: publishedThrough)
        writeBuffer = .allocate(capacity: OutFrame.headroom + configuration.engine.maxWriteBytes)
    }

    deinit { writeBuffer.deallocate() }

    // MARK: any thread

    /// Runs `work` on the loop's thread soon. Returns the number of items now waiting.
    @discardableResult
    func post(_ work: @escaping Work) -> Int {
        let (context, depth) = inbox.withLock { box -> (UInt, Int) in
            box.items.append(work)
            return (box.context, box.items.count)
        }
        if context != 0 { LWSContext.wake(context) }
        return depth
    }

    var inboxDepth: Int { inbox.withLock { $0.items.count } }

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

    /// The thread's body: creates the context, reports through `started`, serves until `stop`.
    func run(started: @escaping @Sendable (SocketError?) -> Void) {
        do throws(SocketError) {
            let lws = try LWSContext(loop: self)
            let poller = try EventPoller()
            try lws.watch(poller.fd)
            try poller.add(listenFD)
            self.lws = lws
            self.poller = poller
            inbox.withLock { $0.context = UInt(bitPattern: lws.context) }
        } catch {
            started(error)
            return
        }
        started(nil)
        while !exitRequested, let context = lws?.context {
            if lws_service(context, 0) < 0 { break }
        }
        inbox.withLock { $0.context = 0 }
        for connection in http.values { _ = sc_close(connection.fd) }
        http.removeAll()
        if listenFD >= 0 { _ = sc_close(listenFD) }
        listenFD = -1
        lws?.destroy() // closes every WebSocket; CLOSED callbacks release their slots
        lws = nil
        poller = nil
        let leftovers = inbox.withLock { box -> [Work] in defer { box.items.removeAll() }; return box.items }
        _ = leftovers // frames held by work that will never run are released here
    }

    /// Asks the loop to leave `lws_service` and close everything.
    func requestExit() {
        post { $0.exitRequested = true }
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
        case LWS_CALLBACK_RAW_ADOPT_FILE, LWS_CALLBACK_RAW_CLOSE_FILE, LWS_CALLBACK_RAW_WRITEABLE_FILE:
            return 0
        case LWS_CALLBACK_HTTP_CONFIRM_UPGRADE:
            let fd = lws_get_socket_fd(wsi)
            guard let entry = adopted.removeValue(forKey: fd) else { return -1 }
            upgrading[UInt(bitPattern: wsi)] = entry.admission
            return 0
        case LWS_CALLBACK_ESTABLISHED:
            return established(wsi, user)
        case LWS_CALLBACK_RECEIVE:
            guard let id = Self.connectionID(user) else { return -1 }
            let final = lws_is_final_fragment(wsi) != 0 && lws_remaining_packet_payload(wsi) == 0
            let bytes = UnsafeRawBufferPointer(start: input, count: input == nil ? 0 : length)
            perform(engine.received(id, bytes, final: final, binary: lws_frame_is_binary(wsi) != 0, now: Self.monotonicNow()))
            return 0
        case LWS_CALLBACK_RECEIVE_PONG:
            if let id = Self.connectionID(user) {
                let now = Self.monotonicNow()
                engine.pongReceived(id, now: now)
                if let rtt = engine.connection(id)?.lastRTT { metrics.heartbeatRTT.recordSeconds(rtt) }
            }
            return 0
        case LWS_CALLBACK_SERVER_WRITEABLE:
            return writable(wsi, user)
        case LWS_CALLBACK_CLOSED:
            closed(wsi, user)
            return 0
        case LWS_CALLBACK_WSI_DESTROY:
            if let admission = upgrading.removeValue(forKey: UInt(bitPattern: wsi)) { gatekeeper.release(admission) }
            return 0
        case LWS_CALLBACK_HTTP:
            // Only admitted upgrades reach libwebsockets; a plain request here means the
            // handshake was not a valid WebSocket one.
            return -1
        default:
            return lws_callback_http_dummy(wsi, reason, user, input, length)
        }
    }

    private static func connectionID(_ user: UnsafeMutableRawPointer?) -> Int? {
        guard let id = user?.load(as: Int.self), id != 0 else { return nil }
        return id
    }

    private func established(_ wsi: OpaquePointer, _ user: UnsafeMutableRawPointer?) -> Int32 {
        guard let admission = upgrading.removeValue(forKey: UInt(bitPattern: wsi)), let user else { return -1 }
        // Connection ids are unique across loops: the loop's index in the low bits.
        let id = nextConnection << 8 | index
        nextConnection += 1
        user.storeBytes(of: id, as: Int.self)
        sockets[id] = (wsi, admission)
        metrics.connectionsOpened.increment()
        let now = Self.monotonicNow()
        perform(engine.connectionOpened(id, identity: admission.identity, token: admission.digest,
                                        peer: LWSContext.peer(wsi), now: now, wall: Date()))
        // A revoke applied between the upgrade decision and now: close at once.
        if !gatekeeper.isValid(admission.digest) {
            perform(engine.committed(CommittedBatch(revokedTokens: [admission.digest]), now: now, wall: Date()))
        }
        logger.debug("connection opened", metadata: ["conn": "\(id)", "user": "\(admission.identity.userID)", "loop": "\(index)"])
        return 0
    }

    private func writable(_ wsi: OpaquePointer, _ user: UnsafeMutableRawPointer?) -> Int32 {
        guard let id = Self.connectionID(user) else { return -1 }
        switch engine.writable(id, now: Self.monotonicNow()) {
        case .idle:
            return 0
        case .ping(let more):
            // Through lws's own ping framing (in this loop's scratch buffer), so that lws
            // hands the peer's pong back as LWS_CALLBACK_RECEIVE_PONG.
            let payload = writeBuffer + OutFrame.headroom
            payload[0] = UInt8(ascii: "h")
            payload[1] = UInt8(ascii: "b")
            if lws_write(wsi, payload, 2, LWS_WRITE_PING) < 2 { return -1 }
            if more { lws_callback_on_writable(wsi) }
            return 0
        case .frames(let frames, let more):
            if frames.count == 1 {
                if !write(wsi, frames[0].wire, frames[0].wireLength) { return -1 }
            } else {
                // Several frames, one write: they share one send() instead of one each.
                var offset = OutFrame.headroom
                for frame in frames {
                    (writeBuffer + offset).update(from: frame.wire, count: frame.wireLength)
                    offset += frame.wireLength
                }
                if !write(wsi, writeBuffer + OutFrame.headroom, offset - OutFrame.headroom) { return -1 }
            }
            metrics.deliveries.increment(by: Int64(frames.count))
            if lws_partial_buffered(wsi) != 0 {
                // The socket took part of it; lws keeps the rest and calls back once it is
                // sent. Until then the engine's write-stall deadline runs.
                engine.writeIncomplete(id)
                lws_callback_on_writable(wsi)
            } else if more {
                lws_callback_on_writable(wsi)
            }
            return 0
        case .close(let code, let reason):
            var bytes = Array(reason.utf8.prefix(120))
            lws_close_reason(wsi, lws_close_status(rawValue: UInt32(code)), &bytes, bytes.count)
            return -1
        }
    }

    /// Writes whole WebSocket frames as they are (`LWS_WRITE_RAW`: the frames carry their
    /// headers, so shared frames are never written into). What the socket does not take now,
    /// libwebsockets keeps and sends before the next writable callback.
    private func write(_ wsi: OpaquePointer, _ bytes: UnsafePointer<UInt8>, _ count: Int) -> Bool {
        lws_write(wsi, UnsafeMutablePointer(mutating: bytes), count, staffcast_lws_write_raw()) >= count
    }

    private func closed(_ wsi: OpaquePointer, _ user: UnsafeMutableRawPointer?) {
        guard let id = Self.connectionID(user), let socket = sockets.removeValue(forKey: id) else { return }
        engine.connectionClosed(id)
        gatekeeper.release(socket.admission)
        user?.storeBytes(of: 0, as: Int.self)
        logger.debug("connection closed", metadata: ["conn": "\(id)", "user": "\(socket.admission.identity.userID)"])
    }

    // MARK: engine actions

    private func perform(_ actions: [EngineAction]) {
        for action in actions {
            switch action {
            case .wantWritable(let id):
                if let wsi = sockets[id]?.wsi { lws_callback_on_writable(wsi) }
            case .drop(let id):
                guard let wsi = sockets[id]?.wsi else { continue }
                // Reset rather than close gracefully: a peer that does not read would hold the
                // kernel's send queue (and libwebsockets' buffer) for minutes otherwise.
                let fd = lws_get_socket_fd(wsi)
                if fd >= 0 { sc_set_linger_zero(fd) }
                lws_set_timeout(wsi, PENDING_TIMEOUT_USER_OK, staffcast_lws_kill_async())
            case .run(let job):
                if case .subscribe = job.request {
                    // Gathered until the loop next drains its inbox, then answered in batches.
                    if subscribes.isEmpty { post { $0.flushSubscribes() } }
                    subscribes.append(job)
                } else if !runner.submit(job, replyTo: self) {
                    perform(engine.jobRefused(connection: job.connection, ref: job.ref, now: Self.monotonicNow()))
                }
            case .notice(let notice):
                log(notice)
            }
        }
    }

    private func log(_ notice: EngineNotice) {
        switch notice {
        case .slowClient(let id, let queued):
            metrics.slowClientsClosed.increment()
            logger.warning("closing slow client", metadata: ["conn": "\(id)", "queued": "\(queued)"])
        case .writeStalled(let id):
            metrics.slowClientsClosed.increment()
            logger.warning("dropping a client that stopped reading", metadata: ["conn": "\(id)"])
        case .heartbeatTimeout(let id):
            logger.info("closing silent connection", metadata: ["conn": "\(id)"])
        case .accessRevoked(let id, let event):
            logger.info("subscription ended: access revoked", metadata: ["conn": "\(id)", "event": "\(event)"])
        case .tokenRevoked(let id):
            logger.info("closing connection: token revoked", metadata: ["conn": "\(id)"])
        case .frameRefused(let id, let code):
            metrics.error(code: code.rawValue)
            logger.info("frame refused", metadata: ["conn": "\(id)", "code": "\(code)"])
        }
    }

    /// Sends the gathered subscribes to the database in batches per event (at most
    /// `maxSubscribeBatch` each), so a reconnect storm costs a few statements per batch.
    private func flushSubscribes() {
        let jobs = subscribes
        subscribes = []
        var byEvent: [UUID: [DatabaseJob]] = [:]
        for job in jobs {
            guard case .subscribe(let event, _, _) = job.request else { continue }
            byEvent[event, default: []].append(job)
        }
        for (event, list) in byEvent {
            for start in stride(from: 0, to: list.count, by: Self.maxSubscribeBatch) {
                let chunk = Array(list[start..<min(start + Self.maxSubscribeBatch, list.count)])
                if !runner.submitSubscribes(event: event, chunk, replyTo: self) {
                    let now = Self.monotonicNow()
                    for job in chunk { perform(engine.jobRefused(connection: job.connection, ref: job.ref, now: now)) }
                }
            }
        }
    }

    static let maxSubscribeBatch = 500

    /// A database job's answer, on the loop's thread.
    func jobFinished(_ job: DatabaseJob, _ outcome: JobOutcome<OutFrame>) {
        perform(engine.jobCompleted(connection: job.connection, ref: job.ref, outcome: outcome,
                                    now: Self.monotonicNow(), wall: Date()))
    }

    /// A committed batch from the change feed, on the loop's thread.
    func deliver(_ batch: CommittedBatch<OutFrame>) {
        perform(engine.committed(batch, now: Self.monotonicNow(), wall: Date()))
    }

    private func drainInbox() {
        let work = inbox.withLock { box -> [Work] in
            let out = box.items
            box.items.removeAll(keepingCapacity: true)
            return out
        }
        for item in work { item(self) }
    }

    // MARK: time and shutdown

    /// Once a second: the engine's heartbeats and deadlines, and the HTTP deadlines.
    func tick() {
        let now = Self.monotonicNow()
        // Sample every socket's kernel send queue (one ioctl each) for the write-stall policy.
        for (id, socket) in sockets {
            let fd = lws_get_socket_fd(socket.wsi)
            if fd >= 0 { engine.socketQueued(id, bytes: Int(max(0, sc_send_queue(fd))), now: now) }
        }
        perform(engine.tick(now: now, wall: Date()))
        for connection in Array(http.values) {
            if !connection.output.isEmpty, now - connection.lastWriteProgress >= configuration.writeStallTimeout {
                close(connection, reset: true)
            } else if connection.isIdle {
                let limit = connection.nextAnswer == 0 ? configuration.headerTimeout : configuration.idleTimeout
                if now - connection.lastActivity >= limit { close(connection, reset: false) }
            } else if !connection.input.isEmpty, connection.answers.isEmpty, !connection.closeAfterAnswers,
                      now - connection.requestStartedAt >= configuration.headerTimeout {
                refuse(connection, HTTPResponse.error(StaffcastError(.invalid,
                    "The request did not arrive in time (\(Int(configuration.headerTimeout)) s); send it whole.")), status: 408)
            }
        }
        for (fd, entry) in adopted where now - entry.at > configuration.headerTimeout {
            adopted[fd] = nil
            gatekeeper.release(entry.admission)
        }
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
        for connection in Array(http.values) {
            connection.closeAfterAnswers = true
            flush(connection)
        }
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
                            inboxDepth: inboxDepth)
    }

    // MARK: plain HTTP on the loop's own descriptors

    private func serviceSockets() {
        guard let poller else { return }
        for ready in poller.poll() {
            if ready.fd == listenFD {
                acceptAll()
            } else if let connection = http[ready.fd] {
                if ready.readable || ready.failed { read(connection) }
                if http[ready.fd] === connection, ready.writable { flush(connection) }
            }
        }
    }

    private func acceptAll() {
        var peer = [CChar](repeating: 0, count: 64)
        for _ in 0..<256 {
            let fd = sc_accept(listenFD, &peer, Int32(peer.count))
            if fd < 0 {
                if -fd != EAGAIN && -fd != EWOULDBLOCK && -fd != EINTR && -fd != ECONNABORTED {
                    logger.warning("accept failed", metadata: ["error": "\(SocketError(operation: "accept", code: -fd))"])
                }
                return
            }
            if let stale = adopted.removeValue(forKey: fd) { gatekeeper.release(stale.admission) }
            let connection = HTTPConnection(fd: fd, serial: nextSerial, peer: String(cString: peer), now: Self.monotonicNow())
            nextSerial += 1
            do {
                try poller?.add(fd)
                http[fd] = connection
            } catch {
                _ = sc_close(fd)
            }
        }
    }

    private func read(_ connection: HTTPConnection) {
        var chunk = [UInt8](repeating: 0, count: 16_384)
        while connection.input.count < HTTPConnection.maxBuffered {
            let n = chunk.withUnsafeMutableBytes { sc_read(connection.fd, $0.baseAddress, $0.count) }
            if n > 0 {
                if connection.input.isEmpty { connection.requestStartedAt = Self.monotonicNow() }
                connection.input += chunk[0..<n]
                connection.lastActivity = Self.monotonicNow()
                if n < chunk.count { break }
            } else if n == 0 {
                connection.peerClosed = true
                break
            } else if -n == EAGAIN || -n == EWOULDBLOCK || -n == EINTR {
                break
            } else {
                close(connection, reset: true)
                return
            }
        }
        frame(connection)
        if connection.peerClosed, http[connection.fd] === connection {
            connection.closeAfterAnswers = true
            if connection.answers.isEmpty && connection.output.isEmpty { close(connection, reset: false) }
        }
    }

    /// Frames as many whole requests as the pipeline allows and dispatches them in order.
    private func frame(_ connection: HTTPConnection) {
        while connection.answers.count < HTTPConnection.maxPipelined, !connection.closeAfterAnswers, !connection.input.isEmpty {
            switch parser.parse(connection.input) {
            case .needMore:
                flush(connection)
                return
            case .incompleteBody(let head):
                if head.header("expect")?.lowercased() == "100-continue", !connection.sentContinue, connection.answers.isEmpty {
                    connection.sentContinue = true
                    connection.output += Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)
                }
                flush(connection)
                return
            case .failure(let e):
                connection.input = []
                refuse(connection, .framing(e), status: e.status)
                return
            case .upgrade(let head, let headLength):
                guard connection.answers.isEmpty, connection.output.isEmpty else {
                    flush(connection) // answer what came before, then take the upgrade
                    return
                }
                upgrade(connection, head, headLength: headLength)
                return
            case .request(let request, let consumed):
                connection.input.removeFirst(consumed)
                connection.sentContinue = false
                connection.requestStartedAt = Self.monotonicNow()
                let keepAlive = request.head.keepAlive && !draining
                if !keepAlive { connection.closeAfterAnswers = true }
                let slot = connection.reserveAnswer()
                let fd = connection.fd
                let serial = connection.serial
                let headOnly = request.head.method == "HEAD"
                api.handle(request) { [self] response in
                    let bytes = response.serialized(keepAlive: keepAlive, headOnly: headOnly)
                    post { loop in loop.answer(fd: fd, serial: serial, slot: slot, bytes) }
                }
            }
        }
        flush(connection)
    }

    /// An answer is ready (on the loop's thread).
    private func answer(fd: Int32, serial: Int, slot: Int, _ bytes: [UInt8]) {
        guard let connection = http[fd], connection.serial == serial, connection.fill(slot, bytes) else { return }
        flush(connection)
        if connection.answers.count < HTTPConnection.maxPipelined, !connection.input.isEmpty, http[fd] === connection {
            frame(connection)
        }
    }

    /// Answers a request that cannot be served and closes the connection after it.
    private func refuse(_ connection: HTTPConnection, _ response: HTTPResponse, status: Int) {
        var response = response
        response.status = status
        connection.closeAfterAnswers = true
        let slot = connection.reserveAnswer()
        _ = connection.fill(slot, response.serialized(keepAlive: false))
        flush(connection)
    }

    /// Writes what is ready, in order; closes a finished connection.
    private func flush(_ connection: HTTPConnection) {
        guard http[connection.fd] === connection else { return }
        connection.releaseReadyAnswers()
        while !connection.output.isEmpty {
            let n = connection.output.withUnsafeBytes { sc_write(connection.fd, $0.baseAddress, $0.count) }
            if n > 0 {
                connection.output.removeFirst(n)
                connection.lastWriteProgress = Self.monotonicNow()
                connection.lastActivity = connection.lastWriteProgress
            } else if -n == EAGAIN || -n == EWOULDBLOCK || -n == EINTR {
                break
            } else {
                close(connection, reset: true)
                return
            }
        }
        let wantWrite = !connection.output.isEmpty
        if wantWrite != connection.writeInterest {
            connection.writeInterest = wantWrite
            poller?.modify(connection.fd, writable: wantWrite)
        }
        if connection.isFinished { close(connection, reset: false) }
    }

    private func close(_ connection: HTTPConnection, reset: Bool) {
        guard http[connection.fd] === connection else { return }
        http[connection.fd] = nil
        poller?.remove(connection.fd)
        if reset { sc_close_reset(connection.fd) } else { _ = sc_close(connection.fd) }
    }

    /// A WebSocket upgrade: decided here from memory (path, draining, token, caps); admitted
    /// ones go to libwebsockets with the bytes read so far.
    private func upgrade(_ connection: HTTPConnection, _ head: HTTPRequestHead, headLength: Int) {
        guard head.path == "/v1/ws" else {
            return refuse(connection, .error(.notFound("WebSockets connect at /v1/ws.")), status: 404)
        }
        guard !draining else {
            return refuse(connection, .error(.unavailable("This server is shutting down; connect again in a moment.")), status: 503)
        }
        guard connection.input.count <= 2_048 else {
            return refuse(connection, .error(StaffcastError(.tooLarge,
                "The upgrade request is larger than 2,048 bytes; send fewer or shorter headers.")), status: 431)
        }
        switch gatekeeper.admit(token: head.bearerToken) {
        case .failure(let error):
            logger.info("refused websocket", metadata: ["peer": "\(connection.peer)", "code": "\(error.code)"])
            metrics.error(code: error.code.rawValue)
            refuse(connection, .error(error), status: error.code.httpStatus)
        case .success(let admission):
            let fd = connection.fd
            let bytes = connection.input
            http[fd] = nil
            poller?.remove(fd)
            adopted[fd] = (admission, Self.monotonicNow())
            do {
                try lws?.adopt(fd, alreadyRead: bytes)
            } catch {
                if let entry = adopted.removeValue(forKey: fd) { gatekeeper.release(entry.admission) }
                logger.warning("websocket handshake not started", metadata: ["error": "\(error)"])
            }
        }
    }
}

/// What one loop holds at one moment (made on its thread, read anywhere).
struct LoopSnapshot: Sendable {
    struct Member: Sendable {
        var connectionID: Int
        var userID: UUID
        var eventID: UUID
        var connectedSince: Date
        var rtt: Double?
    }

    var index: Int
    var connections: Int
    var httpConnections: Int
    var subscribers: [UUID: Int]
    var members: [Member]
    var stats: EngineStats
    var inboxDepth: Int

    /// The same snapshot showing only `events` (what an event owner may see in status).
    func restricted(to events: Set<UUID>) -> LoopSnapshot {
        var s = self
        s.subscribers = subscribers.filter { events.contains($0.key) }
        s.members = members.filter { events.contains($0.eventID) }
        return s
    }
}
