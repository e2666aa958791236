import Foundation
import StaffcastCore
import XCTest

/// The `FanoutEngine` driven as its transport would drive it, without sockets or PostgreSQL:
/// time is given explicitly (`now` monotonic seconds, `wall` dates) and what a connection would
/// receive is read back from `writable` and decoded with `ServerFrame.decode`.
/// The helpers every `FanoutEngine…Tests` class shares (one class per concept, in this folder).
class FanoutEngineTestCase: XCTestCase {
    typealias Engine = FanoutEngine<TestFrame>

    let alice = Identity(userID: UUID(), displayName: "Alice")
    let bob = Identity(userID: UUID(), displayName: "Bob")
    let carol = Identity(userID: UUID(), displayName: "Carol")
    let event = UUID(), other = UUID()
    let tokenA = TokenDigest(bytes: [UInt8](repeating: 0xA1, count: 32))!
    let tokenB = TokenDigest(bytes: [UInt8](repeating: 0xB2, count: 32))!
    let wall0 = Date(timeIntervalSince1970: 1_800_000_000)

    func wall(_ now: Double) -> Date { wall0.addingTimeInterval(now) }

    // MARK: engine and connections

    func makeEngine(publishedThrough: Int64 = 0, _ tweak: (inout EngineConfiguration) -> Void = { _ in }) -> Engine {
        var configuration = EngineConfiguration()
        configuration.nodeID = "test-node"
        tweak(&configuration)
        return Engine(configuration: configuration, publishedThrough: publishedThrough)
    }

    @discardableResult
    func open(_ engine: Engine, _ id: Int, _ who: Identity? = nil, token: TokenDigest? = nil, now: Double = 0) -> [EngineAction] {
        engine.connectionOpened(id, identity: who ?? alice, token: token, peer: "10.0.0.\(id)", now: now, wall: wall(now))
    }

    /// Opens `id`, writes its `hello`, subscribes it to `events` (snapshot level with the hub)
    /// and writes the `subscribed` replies: a connection with nothing waiting.
    func ready(_ engine: Engine, _ id: Int, _ who: Identity? = nil, token: TokenDigest? = nil, events: [UUID] = [],
               now: Double = 0, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(wants(open(engine, id, who, token: token, now: now)), [id], file: file, line: line)
        XCTAssertEqual(ops(flush(engine, id, now: now)), ["hello"], file: file, line: line)
        for e in events {
            guard let pending = requestSubscribe(engine, id, e, ref: "ready", now: now, file: file, line: line) else { return }
            _ = answerSubscribe(engine, id, e, pending.generation, ref: "ready", historyThrough: engine.hub.publishedThrough, now: now)
            XCTAssertEqual(describe(flush(engine, id, now: now)), ["subscribed ref ready"], file: file, line: line)
        }
        XCTAssertEqual(engine.connection(id)?.queuedFrames, 0, file: file, line: line)
        XCTAssertEqual(engine.connection(id)?.inFlight, 0, file: file, line: line)
    }

    // MARK: client frames

    @discardableResult
    func receive(_ engine: Engine, _ id: Int, _ text: String, now: Double = 0, final: Bool = true, binary: Bool = false) -> [EngineAction] {
        receive(engine, id, Array(text.utf8), now: now, final: final, binary: binary)
    }

    @discardableResult
    func receive(_ engine: Engine, _ id: Int, _ bytes: [UInt8], now: Double = 0, final: Bool = true, binary: Bool = false) -> [EngineAction] {
        bytes.withUnsafeBytes { engine.received(id, $0, final: final, binary: binary, now: now) }
    }

    func idString(_ id: UUID) -> String { id.uuidString.lowercased() }

    func sendJSON(_ ref: String, event: UUID? = nil, message: String = "Gates open") -> String {
        #"{"op":"send","ref":"\#(ref)","event_id":"\#(idString(event ?? self.event))","message":"\#(message)"}"#
    }

    /// A subscribe waiting on the database: the job the engine asked to run, and its generation.
    struct PendingSubscribe {
        var job: DatabaseJob
        var generation: Int
    }

    /// Sends `subscribe`; returns the job the engine asks to run.
    func requestSubscribe(_ engine: Engine, _ id: Int, _ event: UUID, ref: String = "s", sinceSeq: Int64? = nil, now: Double = 0,
                          file: StaticString = #filePath, line: UInt = #line) -> PendingSubscribe? {
        let since = sinceSeq.map { #","since_seq":\#($0)"# } ?? ""
        let actions = receive(engine, id, #"{"op":"subscribe","ref":"\#(ref)","event_id":"\#(idString(event))"\#(since)}"#, now: now)
        let runs = jobs(actions)
        guard runs.count == 1, case .subscribe(let e, let s, let generation) = runs[0].request, e == event, s == sinceSeq else {
            XCTFail("expected one subscribe job, got \(actions)", file: file, line: line)
            return nil
        }
        return PendingSubscribe(job: runs[0], generation: generation)
    }

    func subscribedFrame(_ event: UUID, ref: String?) -> TestFrame {
        TestFrame(text: ServerFrame.subscribed(ref: ref, event: EventSummary(id: event, name: "Fest", startsAt: nil, accessLevel: .staff),
                                               history: [], unreadCount: 0).encoded())
    }

    func answerSubscribe(_ engine: Engine, _ id: Int, _ event: UUID, _ generation: Int, ref: String?, historyThrough: Int64,
                         accessThrough: Int64 = 0, changesThrough: Int64 = 0, now: Double = 0) -> [EngineAction] {
        engine.jobCompleted(connection: id, ref: ref,
                            outcome: .subscribed(eventID: event, generation: generation, reply: subscribedFrame(event, ref: ref),
                                                 historyThrough: historyThrough, accessThrough: accessThrough,
                                                 changesThrough: changesThrough),
                            now: now, wall: wall(now))
    }

    func replyFrame(_ frame: ServerFrame) -> TestFrame { TestFrame(text: frame.encoded()) }

    // MARK: committed batches

    func message(_ seq: Int64, _ event: UUID, text: String? = nil, expiresAt: Date? = nil) -> CommittedBatch<TestFrame>.Message {
        let m = StaffMessage(id: UUID(), seq: seq, eventID: event, senderID: bob.userID, senderName: "Bob", message: text ?? "m\(seq)",
                             messageType: .broadcast, priority: .normal, sentAt: wall0, expiresAt: expiresAt, read: false, readCount: 0)
        return .init(seq: seq, eventID: event, expiresAt: expiresAt, frame: TestFrame(text: ServerFrame.message(m).encoded()))
    }

    func notification(for user: Identity) -> CommittedBatch<TestFrame>.Notification {
        let n = StaffNotification(id: UUID(), userID: user.userID, type: "shift", title: "Shift", message: "Come to gate 2",
                                  data: nil, read: false, readAt: nil, createdAt: wall0)
        return .init(userID: user.userID, frame: TestFrame(text: ServerFrame.notification(n).encoded()))
    }

    func revoke(_ user: Identity, from event: UUID, seq: Int64) -> CommittedBatch<TestFrame>.Access {
        .init(seq: seq, eventID: event, userID: user.userID, level: nil,
              revokedFrame: TestFrame(text: ServerFrame.accessRevoked(eventID: event).encoded()))
    }

    func commit(_ engine: Engine, _ messages: [CommittedBatch<TestFrame>.Message], now: Double = 0) -> [EngineAction] {
        engine.committed(CommittedBatch(messages: messages), now: now, wall: wall(now))
    }

    // MARK: actions

    func wants(_ actions: [EngineAction]) -> [Int] {
        actions.compactMap { if case .wantWritable(let id) = $0 { return id } else { return nil } }
    }

    func drops(_ actions: [EngineAction]) -> [Int] {
        actions.compactMap { if case .drop(let id) = $0 { return id } else { return nil } }.sorted()
    }

    func jobs(_ actions: [EngineAction]) -> [DatabaseJob] {
        actions.compactMap { if case .run(let job) = $0 { return job } else { return nil } }
    }

    func notices(_ actions: [EngineAction]) -> [EngineNotice] {
        actions.compactMap { if case .notice(let n) = $0 { return n } else { return nil } }
    }

    // MARK: writing

    /// What the transport wrote while serving writable callbacks until the engine wanted no more.
    struct Written {
        var frames: [TestFrame] = []
        var pings = 0
        var close: (code: UInt16, reason: String)?
        var calls = 0
    }

    func flush(_ engine: Engine, _ id: Int, now: Double = 0, file: StaticString = #filePath, line: UInt = #line) -> Written {
        var written = Written()
        while written.calls < 10_000 {
            written.calls += 1
            switch engine.writable(id, now: now) {
            case .idle:
                return written
            case .frames(let frames, let more):
                XCTAssertFalse(frames.isEmpty, "frames are never empty", file: file, line: line)
                written.frames += frames
                if !more { return written }
            case .ping(let more):
                written.pings += 1
                if !more { return written }
            case .close(let code, let reason):
                written.close = (code, reason)
                return written
            }
        }
        XCTFail("writable kept asking for more", file: file, line: line)
        return written
    }

    func decode(_ frame: TestFrame, file: StaticString = #filePath, line: UInt = #line) -> ServerFrame? {
        do {
            return try ServerFrame.decode(frame.payload)
        } catch {
            XCTFail("undecodable frame \(String(decoding: frame.payload, as: UTF8.self)): \(error)", file: file, line: line)
            return nil
        }
    }

    func ops(_ written: Written) -> [String] { written.frames.map { decode($0)?.op ?? "?" } }

    /// One short line per frame: "message 11", "error unavailable ref s", "pong ref p".
    func describe(_ frames: [TestFrame]) -> [String] {
        frames.map { frame in
            guard let f = decode(frame) else { return "?" }
            switch f {
            case .message(let m): return "message \(m.seq)"
            case .error(let ref, let e): return "error \(e.code)" + (ref.map { " ref \($0)" } ?? "")
            default: return f.op + (f.ref.map { " ref \($0)" } ?? "")
            }
        }
    }

    func describe(_ written: Written) -> [String] { describe(written.frames) }

    func isIdle(_ step: WriteStep<TestFrame>) -> Bool {
        if case .idle = step { return true }
        return false
    }

    func closeCode(_ step: WriteStep<TestFrame>) -> UInt16? {
        if case .close(let code, _) = step { return code }
        return nil
    }

    func frames(_ step: WriteStep<TestFrame>, file: StaticString = #filePath, line: UInt = #line) -> (frames: [TestFrame], more: Bool) {
        guard case .frames(let frames, let more) = step else {
            XCTFail("expected frames, got \(step)", file: file, line: line)
            return ([], false)
        }
        return (frames, more)
    }
}
