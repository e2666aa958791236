import CLibWebSockets
import Foundation
import Logging
import StaffcastCore
import StaffcastPostgres
import Synchronization

/// The staffcast server: one libwebsockets context serving the WebSocket protocol and the
/// HTTP API on one port, database workers, and the change listener.
///
/// Threads and what they own:
/// - **service thread** (one, as Debian's lws is built with `LWS_MAX_SMP 1`): the lws context
///   and every `lws *`, the `Hub`, all `Connection`s and `HTTPExchange`s, the `Authenticator`.
///   Only it writes to sockets, and only from writable callbacks.
/// - **database workers** (`configuration.databaseWorkers`): run requests, encode replies, and
///   `post` the result back.
/// - **listener thread**: reads committed changes, encodes each live frame once, and `post`s it.
/// `post` appends to the inbox under a lock and calls `lws_cancel_service`, which wakes the
/// service thread into `LWS_CALLBACK_EVENT_WAIT_CANCELLED`, where the inbox is drained.
public final class StaffcastServer: @unchecked Sendable {
    public enum State: String, Sendable {
        case idle, starting, running, draining, stopped
    }

    public let configuration: ServerConfiguration
    public let conninfo: String
    let logger: Logger
    let workers: DatabaseWorkers
    let startedAt = Date()

    // Shared between threads (each behind its lock).
    private let inbox = Mutex<[@Sendable () -> Void]>([])
    private let shared = Mutex<(state: State, port: Int, context: UInt, listener: ChangeListener?)>((.idle, 0, 0, nil))
    private let serviceEnded = DispatchSemaphore(value: 0)
    private let tickerStop = DispatchSemaphore(value: 0)
    let drained = DispatchSemaphore(value: 0)

    // Service thread only.
    var context: OpaquePointer?
    var hub: Hub<OutFrame>
    var connections: [Int: Connection] = [:]
    var exchanges: [Int: HTTPExchange] = [:]
    /// Identities checked at the upgrade, until `LWS_CALLBACK_ESTABLISHED` takes them.
    var upgrades: [UInt: Identity] = [:]
    var nextID = 1
    /// Recent access changes by (event, user), to refuse a subscribe whose database check
    /// predates a revoke that the service thread has already applied.
    var recentAccess: [AccessKey: (seq: Int64, level: AccessLevel?, at: Date)] = [:]
    var authenticator: Authenticator
    /// When each user's connections opened in the last hour (at most 100 each), for status.
    var recentOpens: [UUID: [Date]] = [:]
    /// Send rate per bearer token for the HTTP API (the WebSocket has one per connection);
    /// bounded: emptied past 10,000 tokens.
    var httpSendBuckets: [String: TokenBucket] = [:]
    /// Monotonic time of the last presence write (`publishPresence`).
    var lastPresenceWrite = 0.0
    var draining = false
    var exitLoop = false
    var stats = ServerStats()
    let metrics = ServerMetrics()

    struct AccessKey: Hashable {
        var event: UUID
        var user: UUID
    }

    public init(configuration: ServerConfiguration, conninfo: String, logger: Logger) {
        self.configuration = configuration
        self.conninfo = conninfo
        self.logger = logger
        self.workers = DatabaseWorkers(conninfo: conninfo, count: configuration.databaseWorkers,
                                       queueCapacity: configuration.jobQueueCapacity)
        self.hub = Hub(publishedThrough: 0, recentCapacity: configuration.recentWindow)
        self.authenticator = Authenticator(conninfo: conninfo, logger: logger)
    }

    public var state: State { shared.withLock { $0.state } }
    /// The port actually listened on (useful with port 0).
    public var port: Int { shared.withLock { $0.port } }
    var listener: ChangeListener? { shared.withLock { $0.listener } }

    // MARK: lifecycle

    /// Connects to the database, starts listening, and returns once clients can connect.
    /// Throws with a sentence for a person when the port or the database is unusable.
    public func start() throws {
        shared.withLock { $0.state = .starting }
        let cursors: ChangeCursors
        do {
            let conn = try PGConnection(conninfo: conninfo)
            cursors = try Store(conn).currentCursors()
        } catch {
            shared.withLock { $0.state = .stopped }
            throw ServerError.database("cannot read from the database: \(error)")
        }
        hub = Hub(publishedThrough: cursors.message, recentCapacity: configuration.recentWindow)
        workers.start()

        let ready = DispatchSemaphore(value: 0)
        let failure = StartFailure()
        let thread = Thread { [self] in
            serviceThread(ready: ready, failure: failure)
        }
        thread.name = "staffcast-service"
        thread.start()
        ready.wait()
        if let message = failure.message {
            workers.stop()
            shared.withLock { $0.state = .stopped }
            throw ServerError.listen(message)
        }

        let listener = ChangeListener(conninfo: conninfo, from: cursors, pollInterval: configuration.listenerPollInterval,
                                      logger: logger) { [self] batch in
            deliver(batch)
        }
        shared.withLock { $0.listener = listener }
        listener.start()
        // Ready means the listener is up too; wait briefly so `start` returns a ready server.
        let deadline = Date().addingTimeInterval(10)
        while listener.state != .listening && Date() < deadline { usleep(5_000) }
        if listener.state != .listening {
            logger.warning("serving, but the change listener is not listening yet", metadata: ["error": "\(listener.lastError ?? "-")"])
        }
        startTicker()
        shared.withLock { $0.state = .running }
        logger.info("staffcast is serving", metadata: ["host": "\(configuration.host)", "port": "\(port)",
                                                        "node": "\(configuration.nodeID)"])
    }

    /// Graceful stop: refuses new work, lets requests in flight finish, closes every
    /// WebSocket with 1001 (going away) after its queued frames, then ends all threads.
    /// Returns within `shutdownGrace` plus a few seconds.
    public func stop() {
        let alreadyStopping: Bool = shared.withLock {
            guard $0.state == .running || $0.state == .starting else { return true }
            $0.state = .draining
            return false
        }
        if alreadyStopping { return }
        logger.info("stopping: closing connections with 1001")
        post { [self] in beginDrain() }
        if drained.wait(timeout: .now() + configuration.shutdownGrace) == .timedOut {
            logger.warning("some clients did not close in time; closing them now")
        }
        tickerStop.signal()
        post { [self] in exitLoop = true }
        _ = serviceEnded.wait(timeout: .now() + 5)
        listener?.stop()
        // This server's presence rows go with it (queued jobs still run before workers end).
        let node = configuration.nodeID
        _ = workers.submit { session in _ = try? session.store().replacePresence(node: node, rows: []) }
        workers.stop()
        shared.withLock { $0.state = .stopped }
        logger.info("stopped")
    }

    /// Posts `tick()` to the service thread once a second until `stop`.
    private func startTicker() {
        let thread = Thread { [self] in
            while tickerStop.wait(timeout: .now() + 1) == .timedOut {
                post { [self] in tick() }
            }
        }
        thread.name = "staffcast-ticker"
        thread.start()
    }

    /// Runs `work` on the service thread soon. Safe from any thread.
    func post(_ work: @escaping @Sendable () -> Void) {
        let ctx: UInt = inbox.withLock {
            $0.append(work)
            return shared.withLock { $0.context }
        }
        if ctx != 0, let context = OpaquePointer(bitPattern: ctx) { lws_cancel_service(context) }
    }

    /// Work items waiting for the service thread.
    var inboxDepth: Int { inbox.withLock { $0.count } }

    func drainInbox() {
        let work = inbox.withLock { items -> [@Sendable () -> Void] in
            let out = items
            items.removeAll(keepingCapacity: true)
            return out
        }
        for item in work { item() }
    }

    // MARK: service thread

    private func serviceThread(ready: DispatchSemaphore, failure: StartFailure) {
        let transport = LWSTransport(server: self)
        guard let ctx = transport.createContext() else {
            failure.message = transport.failure ?? "libwebsockets could not start"
            ready.signal()
            return
        }
        context = ctx
        shared.withLock {
            $0.context = UInt(bitPattern: ctx)
            $0.port = transport.listenPort
        }
        ready.signal()
        while !exitLoop {
            if lws_service(ctx, 0) < 0 { break }
        }
        shared.withLock { $0.context = 0 }
        // Close what is left without waiting for peers; then the context goes.
        lws_context_destroy(ctx)
        context = nil
        authenticator.close()
        drainInbox() // release frames still queued for connections that are gone
        transport.release()
        serviceEnded.signal()
    }

    func beginDrain() {
        draining = true
        for connection in connections.values {
            connection.closing = .afterFlush(1001, "server shutting down; reconnect")
            lws_callback_on_writable(connection.wsi)
        }
        checkDrained()
    }

    func checkDrained() {
        if draining && connections.isEmpty { drained.signal() }
    }

    // MARK: readiness and status

    public struct Readiness: Sendable, Encodable {
        public var ready: Bool
        public var database: String
        public var listener: String
    }

    public var readiness: Readiness {
        let l = listener
        let listenerState = l?.state.rawValue ?? "stopped"
        let databaseOK = l?.state == .listening
        return Readiness(ready: databaseOK && state == .running,
                         database: databaseOK ? "up" : (l?.lastError ?? "down"),
                         listener: listenerState)
    }
}

/// Written by the service thread before it signals `ready`, read by `start` after waiting.
private final class StartFailure: @unchecked Sendable {
    var message: String?
}
