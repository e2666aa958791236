import CStaffcastSocket
import Foundation
import Logging
import StaffcastCore
import StaffcastPostgres
import Synchronization

/// The staffcast server: composition and lifecycle only. It wires together
/// - `ServiceLoop`s (`service_threads`, default one per core): each a thread with its own
///   libwebsockets context, listening socket (SO_REUSEPORT), HTTP connections and
///   `FanoutEngine` shard; each owns its connections and nothing else touches them;
/// - the `Gatekeeper` (token table and connection caps, in memory, behind a lock);
/// - `DatabaseWorkers` + `JobRunner` (every query runs there, never on a service loop), with
///   sends and marks committed in groups (`SendBatcher`, `ReadBatcher`);
/// - the `ChangeListener` thread + `ChangeFeed` (committed changes, each frame encoded once,
///   the same bytes to every loop);
/// - a `Ticker` thread that posts `tick` to every loop once a second and starts the periodic
///   passes (schedules, escalation, outbox, presence, token use).
/// The API gets what it reads passed in (`ServerHealth`, `LoopDirectory`, `StatusReports`),
/// never the server.
public final class StaffcastServer: @unchecked Sendable {
    /// The lifecycle; each state carries what exists in it.
    public enum State: String, Sendable {
        case idle, starting, running, draining, stopped
    }

    public let configuration: ServerConfiguration
    public let conninfo: String
    let logger: Logger
    let metrics = ServerMetrics()
    let workers: DatabaseWorkers
    let gatekeeper: Gatekeeper
    /// Lifecycle state, port and readiness, shared with the API (read only there).
    let health: ServerHealth
    private(set) var loops: [ServiceLoop] = []
    /// The same loops, for the API's and the ticker's snapshots.
    let directory = LoopDirectory()
    private var listener: ChangeListener?
    /// Times a database round trip every second, for readiness (never on a service loop).
    private var probe: DatabaseProbe?
    /// Runs due reminder/escalation rounds (claimed in the database; see `EscalationRunner`).
    private var escalations: EscalationRunner?
    /// Sends scheduled messages when due (one pass per tick, on a worker).
    private var scheduler: ScheduledDispatcher?
    /// Delivers Web Push, email and webhooks from the outbox (`OutboxRunner`).
    private var outbox: OutboxRunner?
    func setOutbox(_ runner: OutboxRunner) { outbox = runner }
    /// The once-a-second thread (`Ticker`), from `start` on.
    private var ticker: Ticker?
    private let loopsEnded = DispatchGroup()

    public init(configuration: ServerConfiguration, conninfo: String, logger: Logger) {
        self.configuration = configuration
        self.conninfo = conninfo
        self.logger = logger
        self.workers = DatabaseWorkers(conninfo: conninfo, count: configuration.databaseWorkers,
                                       queueCapacity: configuration.jobQueueCapacity)
        self.gatekeeper = Gatekeeper(maxConnections: configuration.maxConnections, maxPerUser: configuration.maxConnectionsPerUser)
        health = ServerHealth(listenerPollInterval: configuration.listenerPollInterval)
    }

    public var state: State { health.state }
    /// The port actually listened on (useful with port 0).
    public var port: Int { health.port }

    // MARK: lifecycle

    /// Throws `ServerError.portInUse` when someone already listens on the configured port. The
    /// loops share the port through SO_REUSEPORT, which would also let them join a port another
    /// staffcast serves (the kernel would then split connections between the two servers), so
    /// this is checked before anything binds. (Port 0 picks a free port: nothing to check.)
    public static func checkPortFree(_ configuration: ServerConfiguration) throws(ServerError) {
        guard configuration.port != 0, ServiceLoop.isInUse(host: configuration.host, port: configuration.port) else { return }
        throw ServerError.portInUse("\(configuration.host):\(configuration.port) is already in use (another staffcast or another program listens there); stop it or choose another --listen")
    }

    /// Reads where the change logs end and every valid token, opens the port on every loop,
    /// starts the threads, and returns once clients can connect. Throws with a sentence for a
    /// person when the port or the database is unusable.
    public func start() throws {
        try Self.checkTLS(configuration)
        health.state = .starting
        var cursors: ChangeCursors
        do {
            let store = Store(try PGConnection(conninfo: conninfo))
            cursors = try store.currentCursors()
            let tokens = try store.validTokens()
            gatekeeper.load(tokens.tokens, through: tokens.through)
            gatekeeper.loadEnded(try store.endedTokens())
            cursors.token = tokens.through
        } catch {
            health.state = .stopped
            throw ServerError.database("cannot read from the database: \(error)")
        }

        // The feed posts to the loops through the directory (set once they exist), so the send
        // batcher can hand its committed batches to it (`ChangeFeed.handOn`).
        let feed = ChangeFeed(loops: directory, start: cursors, gatekeeper: gatekeeper, metrics: metrics,
                              localFanout: configuration.localFanout) { [weak self] in
            self?.state == .running || self?.state == .starting
        }
        let sends = SendBatcher(workers: workers, capacity: configuration.jobQueueCapacity,
                                duplicateWindowMinutes: configuration.duplicateWindowMinutes, logger: logger, metrics: metrics,
                                escalation: configuration.escalation, feed: feed)
        scheduler = ScheduledDispatcher(workers: workers, logger: logger, metrics: metrics,
                                        emergencyEscalation: configuration.escalation.emergencyDefaultMinutes)
        escalations = EscalationRunner(workers: workers, policy: configuration.escalation, logger: logger)
        let vapid: VAPIDKey?
        do {
            vapid = try loadVAPIDKey()
        } catch {
            health.state = .stopped
            throw error
        }
        let reads = ReadBatcher(workers: workers, capacity: configuration.jobQueueCapacity, logger: logger, metrics: metrics)
        let answers = AnswerBatcher(.answers, workers: workers, capacity: configuration.jobQueueCapacity, logger: logger, metrics: metrics)
        let replyLimits = ReplyLimits(configuration)
        let runner = JobRunner(workers: workers, sends: sends, reads: reads, answers: answers, replyLimits: replyLimits,
                               order: ConnectionOrder(workers: workers), logger: logger, metrics: metrics)
        let api = HTTPAPI(configuration: configuration, health: health, loops: directory, pushPublicKey: vapid?.publicKey,
                          gatekeeper: gatekeeper, workers: workers, sends: sends, answers: answers, replyLimits: replyLimits,
                          logger: logger, metrics: metrics)
        let resolver = TokenResolver(gatekeeper: gatekeeper, workers: workers, opsToken: configuration.opsToken,
                                     logger: logger, metrics: metrics)
        loops = (0..<configuration.resolvedServiceThreads).map {
            ServiceLoop(index: $0, configuration: configuration, publishedThrough: cursors.message,
                        changedThrough: cursors.messageChange, logger: logger,
                        metrics: metrics, gatekeeper: gatekeeper, resolver: resolver, runner: runner, api: api)
        }
        directory.set(loops)
        var port = configuration.port
        do {
            try Self.checkPortFree(configuration)
        } catch {
            loops = []
            health.state = .stopped
            throw error
        }
        do {
            for loop in loops { port = try loop.listen(host: configuration.host, port: port) }
        } catch {
            loops = []
            health.state = .stopped
            throw ServerError.listen("cannot listen on \(configuration.host):\(configuration.port): \(error) (is the port in use, or the address not on this machine?)")
        }
        health.port = port
        workers.start()
        startOutbox(vapid: vapid)

        let failures = Mutex<[String]>([])
        let started = DispatchGroup()
        for loop in loops {
            started.enter()
            loopsEnded.enter()
            let thread = Thread { [loopsEnded] in
                loop.run { error in
                    if let error { failures.withLock { $0.append("\(error)") } }
                    started.leave()
                }
                loopsEnded.leave()
            }
            thread.name = "staffcast-loop-\(loop.index)"
            thread.stackSize = 1 << 20
            thread.start()
        }
        started.wait()
        if let failure = failures.withLock({ $0.first }) {
            for loop in loops { loop.requestExit() }
            _ = loopsEnded.wait(timeout: .now() + 5)
            workers.stop()
            health.state = .stopped
            throw ServerError.listen(failure)
        }

        let probe = DatabaseProbe(conninfo: conninfo, interval: readinessRule.probeInterval,
                                  deadline: readinessRule.probeDeadline, logger: logger)
        self.probe = probe
        probe.start()
        let listener = ChangeListener(conninfo: conninfo, from: cursors, pollInterval: configuration.listenerPollInterval,
                                      logger: logger, shortcut: feed.listenerShortcut()) { batch in feed.deliver(batch) }
        self.listener = listener
        health.attach(probe: probe, listener: listener)
        listener.start()
        // Ready means the listener is up too; wait briefly so `start` returns a ready server.
        let deadline = Date().addingTimeInterval(10)
        while (listener.lastRead == nil || probe.lastSuccess == nil) && Date() < deadline { usleep(5_000) }
        if listener.state != .listening {
            logger.warning("serving, but the change listener is not listening yet", metadata: ["error": "\(listener.lastError ?? "-")"])
        }
        let ticker = Ticker(loops: loops, directory: directory, gatekeeper: gatekeeper, workers: workers,
                            nodeID: configuration.nodeID, logger: logger,
                            duties: Ticker.Duties(scheduler: scheduler, escalations: escalations, outbox: outbox))
        self.ticker = ticker
        ticker.start()
        health.state = .running
        logger.info("staffcast is serving", metadata: ["host": "\(configuration.host)", "port": "\(port)",
                                                        "loops": "\(loops.count)", "tokens": "\(gatekeeper.tokenCount)",
                                                        "node": "\(configuration.nodeID)"])
    }

    /// Graceful stop: refuses new work, lets requests in flight finish, closes every WebSocket
    /// with 1001 after its queued frames, then ends all threads. Returns within
    /// `shutdownGrace` plus a few seconds, however loaded the server is. The same steps, in
    /// the same order, as the `ServiceGroup` of `staffcast serve` (`services(after:)`).
    public func stop() {
        guard health.beginDraining() else { return } // stopping already, or never started
        drainLoops(claimed: true)
        stopTicker()
        stopListener()
        stopOutbox()
        stopProbe()
        stopWorkers()
    }

    // MARK: shutdown steps (each once; safe before `start` finished)

    /// The loops stop accepting, answer what is in flight, flush and close every WebSocket
    /// with 1001 (at most `shutdownGrace`), then end their threads (at most 5 s more).
    /// `claimed`: the caller moved the state to draining already.
    func drainLoops(claimed: Bool = false) {
        if !claimed { guard health.beginDraining() else { return } }
        logger.info("stopping: closing connections with 1001")
        for loop in loops { loop.post { $0.beginDrain() } }
        let deadline = Date().addingTimeInterval(configuration.shutdownGrace)
        while Date() < deadline {
            let drained = Mutex(0)
            let asked = DispatchGroup()
            for loop in loops {
                asked.enter()
                loop.post { l in
                    if l.isDrained { drained.withLock { $0 += 1 } }
                    asked.leave()
                }
            }
            _ = asked.wait(timeout: .now() + 0.5)
            if drained.withLock({ $0 }) == loops.count { break }
            usleep(50_000)
        }
        for loop in loops { loop.requestExit() }
        if loopsEnded.wait(timeout: .now() + 5) == .timedOut {
            logger.warning("a service loop did not end in time")
        }
    }

    func stopTicker() { ticker?.stop() }
    func stopListener() { listener?.stop() }
    func stopOutbox() { outbox?.stop(grace: configuration.shutdownGrace) }
    func stopProbe() { probe?.stop() }

    /// The last step: this server's presence rows go (queued jobs still run before the workers
    /// end), then the workers.
    func stopWorkers() {
        guard health.state != .stopped, health.state != .idle else { return }
        let node = configuration.nodeID
        _ = workers.submit { session in _ = try? session.store().replacePresence(node: node, rows: []) }
        workers.stop()
        health.state = .stopped
        logger.info("stopped")
    }

    /// Writes `last_used_at` of the tokens used since the last call (on a worker; the ticker
    /// calls it every `Ticker.tokenUseInterval`).
    public func flushTokenUse() {
        Ticker.flushTokenUse(gatekeeper: gatekeeper, workers: workers, logger: logger)
    }

    // MARK: readiness

    var readinessRule: ReadinessRule { health.rule }

    /// Ready for traffic (`/readyz`): from what the probe and the listener last recorded, so
    /// asking never waits on the database.
    public var readiness: Readiness { health.readiness }
}
