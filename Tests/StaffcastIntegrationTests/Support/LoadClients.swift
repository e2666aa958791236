import Foundation
import StaffcastClient
import StaffcastCore
#if canImport(Glibc)
import Glibc
#endif

/// A subscriber for fault tests: on its own thread it connects, subscribes (with `since_seq`
/// = the highest seq it has once it has one), records every message it is given (from the
/// `subscribed` history and live), and reconnects whenever the connection ends. It does not
/// drop repeats: the test counts them.
final class RecordingSubscriber: @unchecked Sendable {
    let url: String
    let token: String
    let event: UUID
    private let lock = NSLock()
    private var counts: [UUID: Int] = [:]
    private var lastSeq: Int64?
    private(set) var connections = 0
    private var subscriptions = 0
    private let thread = StoppableThread()

    init(url: String, token: String, event: UUID) {
        self.url = url
        self.token = token
        self.event = event
    }

    /// Message id → how many times it was received.
    var received: [UUID: Int] { lock.withLock { counts } }
    var connectionCount: Int { lock.withLock { connections } }
    /// `subscribed` replies received (one per successful (re)subscribe).
    var subscribedCount: Int { lock.withLock { subscriptions } }
    private var isStopped: Bool { thread.isStopped }

    func start() { thread.start(name: "subscriber") { [self] in run() } }

    func stop() { thread.stop() }

    private func record(_ messages: [StaffMessage]) {
        lock.withLock {
            for m in messages {
                counts[m.id, default: 0] += 1
                lastSeq = max(lastSeq ?? 0, m.seq)
            }
        }
    }

    private func subscribeFrame() -> [String: Any] {
        var o: [String: Any] = ["op": "subscribe", "event_id": event.uuidString.lowercased(), "ref": "sub"]
        if let since = lock.withLock({ lastSeq }) { o["since_seq"] = since }
        return o
    }

    private func run() {
        while !isStopped {
            guard let client = try? WebSocketClient(url: url, headers: ["Authorization": "Bearer \(token)"]) else {
                usleep(100_000) // the server is away: try again shortly, as a client would
                continue
            }
            lock.withLock { connections += 1 }
            let socket = TestSocket(client)
            do {
                try socket.send(subscribeFrame())
                while !isStopped {
                    guard let frame = try socket.nextOrNil(timeout: 0.2) else { continue }
                    switch frame {
                    case .subscribed(_, _, let history, _, _):
                        record(history)
                        // Subscribed once: from now on everything after seq 0 is wanted, so a
                        // reconnect before the first message still asks with since_seq.
                        lock.withLock {
                            subscriptions += 1
                            if lastSeq == nil { lastSeq = 0 }
                        }
                    case .message(let m): record([m])
                    case .error(let ref, _) where ref == "sub":
                        // e.g. unavailable while the database is away: ask again shortly.
                        usleep(300_000) // a client's pause before asking again
                        try socket.send(subscribeFrame())
                    default: break
                    }
                }
                socket.close()
            } catch {
                // closed or reset: reconnect and catch up with since_seq
            }
        }
    }
}

/// A sender for fault tests: on its own thread, over one WebSocket at a time (reconnecting
/// when it ends), keeps up to `window` sends in flight and records which were acknowledged
/// (`sent`) and which were refused, by code.
final class RecordingSender: @unchecked Sendable {
    let url: String
    let token: String
    let event: UUID
    let name: String
    let window: Int
    let spacing: useconds_t
    private let lock = NSLock()
    private var ackedIDs: [UUID: Int64] = [:]
    private var refusedCodes: [String: Int] = [:]
    private var attempted = 0
    private var paused = false
    /// Sends on the current connection not answered yet.
    private var inFlight = 0
    private let thread = StoppableThread()

    init(url: String, token: String, event: UUID, name: String, window: Int = 8, spacing: useconds_t = 5_000) {
        self.url = url
        self.token = token
        self.event = event
        self.name = name
        self.window = window
        self.spacing = spacing
    }

    /// Acknowledged message id → seq.
    var acked: [UUID: Int64] { lock.withLock { ackedIDs } }
    var refused: [String: Int] { lock.withLock { refusedCodes } }
    var attempts: Int { lock.withLock { attempted } }
    private var isStopped: Bool { thread.isStopped }

    func start() { thread.start(name: "sender") { [self] in run() } }

    /// Sends nothing more; answers to sends in flight are still recorded until `stop`.
    func pause() { lock.withLock { paused = true } }

    /// Paused, and every send has its answer (or its connection ended, leaving it unknown).
    var settled: Bool { lock.withLock { paused && inFlight == 0 } }

    func stop() {
        lock.withLock { paused = true }
        thread.stop()
    }

    private func run() {
        var n = 0
        while !isStopped {
            guard let client = try? WebSocketClient(url: url, headers: ["Authorization": "Bearer \(token)"]) else {
                usleep(100_000) // the server is away: try again shortly, as a client would
                continue
            }
            let socket = TestSocket(client)
            do {
                while !isStopped {
                    while lock.withLock({ inFlight < window && !paused }) {
                        n += 1
                        try socket.send(["op": "send", "event_id": event.uuidString.lowercased(), "message": "\(name) #\(n)",
                                         "ref": "\(name)-\(n)"])
                        lock.withLock { attempted += 1; inFlight += 1 }
                        usleep(spacing) // the sender's pace
                    }
                    guard let frame = try socket.nextOrNil(timeout: 0.05) else { continue }
                    switch frame {
                    case .sent(_, let m):
                        lock.withLock { ackedIDs[m.id] = m.seq; inFlight -= 1 }
                    case .error(_, let e):
                        lock.withLock { refusedCodes[e.code.rawValue, default: 0] += 1; inFlight -= 1 }
                        if e.code == .unavailable { usleep(50_000) } // back off while the database is away
                    default: break
                    }
                }
                socket.close()
            } catch {
                // the connection ended: what was in flight is unknown (may or may not be stored)
            }
            lock.withLock { inFlight = 0 }
        }
    }
}

/// The real `staffcast serve` executable as a child process (so it can be SIGKILLed).
final class ServeProcess {
    let process = Process()
    let port: Int
    var url: String { "http://127.0.0.1:\(port)" }
    var ws: String { "ws://127.0.0.1:\(port)/v1/ws" }

    /// Where its stderr goes (the log, at level `logLevel`).
    let logFile: String

    /// Starts `staffcast serve` on `port` (0: any) serving as `databaseURL` (migrating as
    /// `migrateURL`, when given) with `config` (YAML), and returns once its banner names the port.
    init(port: Int = 0, databaseURL: String, migrateURL: String?, config: String, logLevel: String = "error") throws {
        let dir = NSTemporaryDirectory() + "sc-serve-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let file = dir + "/staffcast.yaml"
        try config.write(toFile: file, atomically: true, encoding: .utf8)
        process.executableURL = URL(fileURLWithPath: CommandLineTests.binary)
        process.arguments = ["serve", "--listen", "127.0.0.1:\(port)", "--config", file, "--database-url", databaseURL,
                             "--log-level", logLevel] + (migrateURL.map { ["--migrate-database-url", $0] } ?? [])
        var env = ProcessInfo.processInfo.environment
        for key in ["STAFFCAST_LISTEN", "STAFFCAST_DATABASE_URL", "STAFFCAST_MIGRATE_DATABASE_URL", "STAFFCAST_CONFIG",
                    "STAFFCAST_OPS_TOKEN", "STAFFCAST_WORKERS"] {
            env[key] = nil
        }
        process.environment = env
        let banner = Pipe()
        process.standardOutput = banner
        logFile = dir + "/serve.log"
        FileManager.default.createFile(atPath: logFile, contents: nil)
        process.standardError = FileHandle(forWritingAtPath: logFile)
        try process.run()
        let (found, text) = ServeBanner.port(from: banner.fileHandleForReading, seconds: 60)
        guard found > 0 else {
            process.terminate()
            let log = (try? String(contentsOfFile: logFile, encoding: .utf8)) ?? ""
            throw RawSocketError("staffcast serve did not start: \(text) \(log.suffix(2_000))")
        }
        self.port = found
    }

    /// SIGKILL: no goodbye to anyone; waits until the process is gone.
    func kill9() {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    func stop() {
        guard process.isRunning else { return }
        process.terminate()
        process.waitUntilExit()
    }

    var log: String { (try? String(contentsOfFile: logFile, encoding: .utf8)) ?? "" }
}
