import Foundation
import StaffcastCore
import XCTest

/// A frame as these tests see it: the payload bytes and nothing else (no WebSocket header),
/// so `wireLength` is the payload's length.
final class TestFrame: WireFrame {
    let payload: [UInt8]
    init(text payload: [UInt8]) { self.payload = payload }
    var wireLength: Int { payload.count }
}

/// The `FanoutEngine` driven as its transport would drive it, without sockets or PostgreSQL:
/// time is given explicitly (`now` monotonic seconds, `wall` dates) and what a connection would
/// receive is read back from `writable` and decoded with `ServerFrame.decode`.
final class FanoutEngineTests: XCTestCase {
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
                         accessThrough: Int64 = 0, now: Double = 0) -> [EngineAction] {
        engine.jobCompleted(connection: id, ref: ref,
                            outcome: .subscribed(eventID: event, generation: generation, reply: subscribedFrame(event, ref: ref),
                                                 historyThrough: historyThrough, accessThrough: accessThrough),
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

    // MARK: - opening and writing

    func testOpenQueuesHelloAndAsksForWritableOnce() throws {
        let engine = makeEngine()
        let actions = open(engine, 1, alice, token: tokenA, now: 5)
        XCTAssertEqual(actions.count, 1)
        XCTAssertEqual(wants(actions), [1])
        let connection = try XCTUnwrap(engine.connection(1))
        XCTAssertTrue(connection.isOpen)
        XCTAssertEqual(connection.identity, alice)
        XCTAssertEqual(connection.token, tokenA)
        XCTAssertEqual(connection.peer, "10.0.0.1")
        XCTAssertEqual(connection.openedAt, wall(5))
        XCTAssertEqual(connection.queuedFrames, 1)
        XCTAssertGreaterThan(connection.queuedBytes, 0)
        XCTAssertEqual(engine.hub.connections(ofUser: alice.userID), [1])

        let (written, more) = frames(engine.writable(1, now: 5))
        XCTAssertFalse(more)
        XCTAssertEqual(written.count, 1)
        XCTAssertEqual(written.first.flatMap { decode($0) }, .hello(user: alice, serverTime: wall(5), node: "test-node"))
        XCTAssertTrue(isIdle(engine.writable(1, now: 5)), "nothing more to write")
        XCTAssertEqual(connection.queuedFrames, 0)
        XCTAssertEqual(connection.queuedBytes, 0)
        XCTAssertEqual(connection.framesWritten, 1)
        XCTAssertEqual(engine.stats.connectionsOpened, 1)
        XCTAssertEqual(engine.stats.framesDelivered, 1)
    }

    func testWritableBatchesFramesUpToMaxWriteBytes() {
        let probe = message(1, event).frame.wireLength
        let engine = makeEngine { $0.maxWriteBytes = 3 * probe + probe / 2 }
        ready(engine, 1, events: [event])
        let batch = (1...7).map { message(Int64($0), event) }
        XCTAssertEqual(Set(batch.map(\.frame.wireLength)), [probe], "same-sized frames")
        XCTAssertEqual(wants(commit(engine, batch, now: 1)), [1], "one writable for the whole batch")

        var step = frames(engine.writable(1, now: 1))
        XCTAssertEqual(describe(step.frames), ["message 1", "message 2", "message 3"])
        XCTAssertTrue(step.more)
        step = frames(engine.writable(1, now: 1))
        XCTAssertEqual(describe(step.frames), ["message 4", "message 5", "message 6"])
        XCTAssertTrue(step.more)
        step = frames(engine.writable(1, now: 1))
        XCTAssertEqual(describe(step.frames), ["message 7"])
        XCTAssertFalse(step.more)
        XCTAssertTrue(step.frames[0] === batch[6].frame, "the committed frame itself is written")
        XCTAssertTrue(isIdle(engine.writable(1, now: 1)))
        XCTAssertEqual(engine.connection(1)?.framesWritten, 2 + 7) // hello, subscribed, seven messages

        // A frame larger than one write goes out on its own; the rest batch again after it.
        let big = message(9, event, text: String(repeating: "x", count: 4 * probe))
        XCTAssertGreaterThan(big.frame.wireLength, engine.configuration.maxWriteBytes)
        _ = commit(engine, [message(8, event), big, message(10, event), message(11, event)], now: 2)
        XCTAssertEqual(describe(frames(engine.writable(1, now: 2)).frames), ["message 8"])
        XCTAssertEqual(describe(frames(engine.writable(1, now: 2)).frames), ["message 9"])
        step = frames(engine.writable(1, now: 2))
        XCTAssertEqual(describe(step.frames), ["message 10", "message 11"])
        XCTAssertFalse(step.more)
    }

    func testWantWritableIsAskedOncePerBurst() {
        let engine = makeEngine { $0.maxWriteBytes = 1 } // one frame per write
        ready(engine, 1, events: [event])
        XCTAssertEqual(wants(commit(engine, [message(1, event)], now: 1)), [1])
        XCTAssertEqual(wants(commit(engine, [message(2, event)], now: 1)), [], "a writable is already asked for")
        XCTAssertEqual(wants(receive(engine, 1, #"{"op":"ping","ref":"p"}"#, now: 1)), [], "a reply joins the same burst")

        var step = frames(engine.writable(1, now: 1))
        XCTAssertEqual(describe(step.frames), ["message 1"])
        XCTAssertTrue(step.more)
        XCTAssertEqual(wants(commit(engine, [message(3, event)], now: 1)), [], "still asked for: `more` was true")
        var written = describe(step.frames)
        while step.more {
            step = frames(engine.writable(1, now: 1))
            written += describe(step.frames)
        }
        XCTAssertEqual(written, ["message 1", "message 2", "pong ref p", "message 3"])
        XCTAssertTrue(isIdle(engine.writable(1, now: 1)))
        XCTAssertEqual(wants(commit(engine, [message(4, event)], now: 2)), [1], "a new burst asks again")
    }

    // MARK: - client frames

    func testPingIsAnsweredWithPongAndItsRef() {
        let engine = makeEngine()
        ready(engine, 1)
        let actions = receive(engine, 1, #"{"op":"ping","ref":"p1"}"#, now: 1)
        XCTAssertEqual(wants(actions), [1])
        XCTAssertTrue(jobs(actions).isEmpty)
        XCTAssertEqual(flush(engine, 1, now: 1).frames.compactMap { decode($0) }, [.pong(ref: "p1")])
        receive(engine, 1, #"{"op":"ping"}"#, now: 1)
        XCTAssertEqual(flush(engine, 1, now: 1).frames.compactMap { decode($0) }, [.pong(ref: nil)])
    }

    func testMalformedFramesGetInvalidAndANoticeAndTheConnectionStays() {
        let engine = makeEngine()
        ready(engine, 1)
        let actions = receive(engine, 1, "{nope", now: 1)
        XCTAssertEqual(notices(actions), [.frameRefused(connection: 1, code: .invalid)])
        XCTAssertEqual(wants(actions), [1])
        XCTAssertEqual(describe(flush(engine, 1, now: 1)), ["error invalid"])

        // The ref is echoed when it could be read.
        let unknown = receive(engine, 1, #"{"op":"dance","ref":"d1"}"#, now: 1)
        XCTAssertEqual(notices(unknown), [.frameRefused(connection: 1, code: .invalid)])
        XCTAssertEqual(describe(flush(engine, 1, now: 1)), ["error invalid ref d1"])
        receive(engine, 1, "[1,2]", now: 1)
        receive(engine, 1, #"{"op":"subscribe","ref":"bad","event_id":"not-a-uuid"}"#, now: 1)
        XCTAssertEqual(describe(flush(engine, 1, now: 1)), ["error invalid", "error invalid ref bad"])

        XCTAssertTrue(engine.connection(1)?.isOpen ?? false)
        XCTAssertEqual(engine.connection(1)?.inFlight, 0)
        receive(engine, 1, #"{"op":"ping","ref":"still"}"#, now: 1)
        XCTAssertEqual(describe(flush(engine, 1, now: 1)), ["pong ref still"])
    }

    func testBinaryFramesAreInvalid() {
        let engine = makeEngine()
        ready(engine, 1)
        let actions = receive(engine, 1, #"{"op":"ping","ref":"b"}"#, now: 1, binary: true)
        XCTAssertTrue(jobs(actions).isEmpty)
        XCTAssertEqual(describe(flush(engine, 1, now: 1)), ["error invalid"])
        XCTAssertTrue(engine.connection(1)?.isOpen ?? false)
    }

    func testFragmentsAreAssembledAcrossCalls() {
        let engine = makeEngine()
        ready(engine, 1)
        let text = Array(#"{"op":"ping","ref":"fragmented"}"#.utf8)
        XCTAssertTrue(receive(engine, 1, Array(text[0..<5]), now: 1, final: false).isEmpty)
        XCTAssertTrue(receive(engine, 1, Array(text[5..<20]), now: 1, final: false).isEmpty)
        XCTAssertTrue(receive(engine, 1, [UInt8](), now: 1, final: false).isEmpty, "an empty fragment changes nothing")
        XCTAssertEqual(wants(receive(engine, 1, Array(text[20...]), now: 1, final: true)), [1])
        XCTAssertEqual(describe(flush(engine, 1, now: 1)), ["pong ref fragmented"])
        // The next frame starts afresh.
        receive(engine, 1, #"{"op":"ping","ref":"next"}"#, now: 1)
        XCTAssertEqual(describe(flush(engine, 1, now: 1)), ["pong ref next"])
    }

    func testFramesOverTheLimitAreDroppedWithTooLargeAndTheConnectionStaysUsable() {
        let engine = makeEngine()
        ready(engine, 1)
        // Fragments that only together pass the limit, then a small last one.
        XCTAssertTrue(receive(engine, 1, [UInt8](repeating: 0x20, count: 40_000), now: 1, final: false).isEmpty)
        XCTAssertTrue(receive(engine, 1, [UInt8](repeating: 0x20, count: 30_000), now: 1, final: false).isEmpty)
        XCTAssertTrue(receive(engine, 1, [UInt8](repeating: 0x20, count: 10), now: 1, final: false).isEmpty)
        let actions = receive(engine, 1, #"{"op":"ping","ref":"lost"}"#, now: 1, final: true)
        XCTAssertTrue(jobs(actions).isEmpty)
        XCTAssertEqual(describe(flush(engine, 1, now: 1)), ["error too_large"])
        XCTAssertTrue(engine.connection(1)?.isOpen ?? false)

        // The connection stays usable, and a frame of exactly the limit is not too large.
        let head = Array(#"{"op":"ping","ref":"exact"}"#.utf8)
        let exact = head + [UInt8](repeating: 0x20, count: Limits.maxFrameBytes - head.count)
        XCTAssertEqual(exact.count, Limits.maxFrameBytes)
        receive(engine, 1, Array(exact[0..<30_000]), now: 2, final: false)
        receive(engine, 1, Array(exact[30_000...]), now: 2, final: true)
        XCTAssertEqual(describe(flush(engine, 1, now: 2)), ["pong ref exact"])

        // One byte more, in one frame.
        receive(engine, 1, exact + [0x20], now: 3)
        XCTAssertEqual(describe(flush(engine, 1, now: 3)), ["error too_large"])
        receive(engine, 1, #"{"op":"ping","ref":"after"}"#, now: 3)
        XCTAssertEqual(describe(flush(engine, 1, now: 3)), ["pong ref after"])
    }

    func testEachRequestBecomesItsJob() throws {
        let engine = makeEngine()
        ready(engine, 1, alice)
        let message = UUID(), note = UUID()
        let requests: [(String, DatabaseJob.Request?)] = [
            (#"{"op":"subscribe","ref":"r1","event_id":"\#(idString(event))","since_seq":5}"#, nil),
            (sendJSON("r2"), .client(.send(try SendRequest(eventID: event, message: "Gates open")))),
            (#"{"op":"mark_read","ref":"r3","message_id":"\#(idString(message))"}"#, .client(.markRead(messageID: message))),
            (#"{"op":"mark_notification_read","ref":"r4","notification_id":"\#(idString(note))"}"#,
             .client(.markNotificationRead(notificationID: note))),
            (#"{"op":"history","ref":"r5","event_id":"\#(idString(event))","before_seq":10,"limit":20}"#,
             .client(.history(eventID: event, beforeSeq: 10, limit: 20))),
            (#"{"op":"history","ref":"r6","event_id":"\#(idString(event))"}"#,
             .client(.history(eventID: event, beforeSeq: nil, limit: Limits.defaultHistoryLimit))),
            (#"{"op":"list_events","ref":"r7"}"#, .client(.listEvents)),
        ]
        for (i, (text, expected)) in requests.enumerated() {
            let actions = receive(engine, 1, text, now: 1)
            XCTAssertEqual(actions.count, 1, text)
            let job = try XCTUnwrap(jobs(actions).first, text)
            XCTAssertEqual(job.connection, 1)
            XCTAssertEqual(job.ref, "r\(i + 1)")
            XCTAssertEqual(job.identity, alice)
            if let expected {
                XCTAssertEqual(job.request, expected)
            } else {
                guard case .subscribe(let e, let since, _) = job.request else { return XCTFail("\(job.request)") }
                XCTAssertEqual(e, event)
                XCTAssertEqual(since, 5)
            }
        }
        XCTAssertEqual(engine.connection(1)?.inFlight, requests.count)
        XCTAssertTrue(isIdle(engine.writable(1, now: 1)), "nothing is answered before the database")

        // unsubscribe needs no database: answered at once, also when not subscribed.
        let actions = receive(engine, 1, #"{"op":"unsubscribe","ref":"u","event_id":"\#(idString(other))"}"#, now: 1)
        XCTAssertTrue(jobs(actions).isEmpty)
        XCTAssertEqual(flush(engine, 1, now: 1).frames.compactMap { decode($0) }, [.unsubscribed(ref: "u", eventID: other)])
        XCTAssertEqual(engine.connection(1)?.inFlight, requests.count)
    }

    func testJobRepliesAreQueuedAndFailuresBecomeErrorsWithTheirRef() {
        let engine = makeEngine()
        ready(engine, 1)
        receive(engine, 1, #"{"op":"list_events","ref":"e"}"#, now: 1)
        receive(engine, 1, sendJSON("s"), now: 1)
        receive(engine, 1, #"{"op":"list_events","ref":"x"}"#, now: 1)
        XCTAssertEqual(engine.connection(1)?.inFlight, 3)

        // Answers come back in any order.
        var actions = engine.jobCompleted(connection: 1, ref: "s", outcome: .failed(.forbidden("Staff may not send.")), now: 2, wall: wall(2))
        XCTAssertEqual(wants(actions), [1])
        actions = engine.jobCompleted(connection: 1, ref: "e", outcome: .reply(replyFrame(.events(ref: "e", events: []))), now: 2, wall: wall(2))
        XCTAssertEqual(wants(actions), [], "same burst")
        XCTAssertEqual(engine.connection(1)?.inFlight, 1)
        let written = flush(engine, 1, now: 2)
        XCTAssertEqual(describe(written), ["error forbidden ref s", "events ref e"])
        XCTAssertEqual(written.frames.first.flatMap { decode($0) }, .error(ref: "s", .forbidden("Staff may not send.")))

        // The runner's queue is full: nothing was done, the request is answered `unavailable`.
        actions = engine.jobRefused(connection: 1, ref: "x", now: 3)
        XCTAssertEqual(wants(actions), [1])
        XCTAssertEqual(engine.connection(1)?.inFlight, 0)
        XCTAssertEqual(describe(flush(engine, 1, now: 3)), ["error unavailable ref x"])

        // Answers for connections that are gone are ignored.
        XCTAssertTrue(engine.jobRefused(connection: 99, ref: "x", now: 3).isEmpty)
        XCTAssertTrue(engine.jobCompleted(connection: 99, ref: nil, outcome: .reply(replyFrame(.pong(ref: nil))), now: 3, wall: wall(3)).isEmpty)
    }

    // MARK: - subscribing

    func testSubscribedAnswerIsQueuedThenLiveMessagesFollow() {
        let engine = makeEngine(publishedThrough: 10)
        ready(engine, 1)
        guard let pending = requestSubscribe(engine, 1, event, ref: "s", sinceSeq: 3, now: 1) else { return }
        let generation = pending.generation
        XCTAssertEqual(pending.job.ref, "s")
        XCTAssertEqual(pending.job.identity, alice)
        XCTAssertEqual(engine.connection(1)?.inFlight, 1)
        XCTAssertFalse(engine.hub.isSubscribed(1, to: event), "not before the snapshot is lined up")

        let actions = answerSubscribe(engine, 1, event, generation, ref: "s", historyThrough: 10, now: 2)
        XCTAssertEqual(wants(actions), [1])
        XCTAssertEqual(engine.connection(1)?.inFlight, 0)
        XCTAssertTrue(engine.hub.isSubscribed(1, to: event))
        XCTAssertEqual(describe(flush(engine, 1, now: 2)), ["subscribed ref s"])
        _ = commit(engine, [message(11, event)], now: 3)
        XCTAssertEqual(describe(flush(engine, 1, now: 3)), ["message 11"])
    }

    func testSnapshotBehindFanoutReplaysTheMissedFramesAfterSubscribed() {
        let engine = makeEngine(publishedThrough: 10)
        ready(engine, 1)
        ready(engine, 2, bob, events: [event])
        guard let generation = requestSubscribe(engine, 1, event, ref: "s", now: 1)?.generation else { return }

        let m11 = message(11, event), m12 = message(12, other)
        let m13 = message(13, event, expiresAt: wall(1.5)), m14 = message(14, event)
        let actions = commit(engine, [m11, m12, m13, m14], now: 1)
        XCTAssertEqual(wants(actions), [2], "not to the connection still waiting on its snapshot")
        XCTAssertEqual(engine.connection(1)?.queuedFrames, 0)
        XCTAssertEqual(describe(flush(engine, 2, now: 1)), ["message 11", "message 13", "message 14"])

        // The snapshot saw up to 10: 11 and 14 are replayed right after `subscribed` (13 has expired by now).
        XCTAssertEqual(wants(answerSubscribe(engine, 1, event, generation, ref: "s", historyThrough: 10, now: 2)), [1])
        let written = flush(engine, 1, now: 2)
        XCTAssertEqual(describe(written), ["subscribed ref s", "message 11", "message 14"])
        XCTAssertTrue(written.frames.count == 3 && written.frames[1] === m11.frame && written.frames[2] === m14.frame,
                      "the replayed frames are the committed ones")

        // Then live, each message once.
        _ = commit(engine, [message(15, event)], now: 3)
        XCTAssertEqual(describe(flush(engine, 1, now: 3)), ["message 15"])
        XCTAssertEqual(describe(flush(engine, 2, now: 3)), ["message 15"])
    }

    func testSnapshotAheadOfFanoutSendsNoDuplicates() {
        let engine = makeEngine(publishedThrough: 10)
        ready(engine, 1)
        guard let generation = requestSubscribe(engine, 1, event, ref: "s", now: 1)?.generation else { return }
        // The snapshot already holds 11 and 12 in its history; the listener has not read them yet.
        _ = answerSubscribe(engine, 1, event, generation, ref: "s", historyThrough: 12, now: 2)
        XCTAssertEqual(describe(flush(engine, 1, now: 2)), ["subscribed ref s"])
        XCTAssertEqual(wants(commit(engine, [message(11, event), message(12, event)], now: 3)), [], "already in the history")
        XCTAssertEqual(wants(commit(engine, [message(13, event)], now: 3)), [1])
        XCTAssertEqual(describe(flush(engine, 1, now: 3)), ["message 13"])
    }

    func testAWindowThatNoLongerCoversTheGapAnswersUnavailable() {
        let engine = makeEngine { $0.recentWindow = 2 }
        ready(engine, 1)
        guard let generation = requestSubscribe(engine, 1, event, ref: "s", now: 1)?.generation else { return }
        _ = commit(engine, (1...5).map { message(Int64($0), event) }, now: 1)
        _ = answerSubscribe(engine, 1, event, generation, ref: "s", historyThrough: 1, now: 2)
        XCTAssertEqual(describe(flush(engine, 1, now: 2)), ["error unavailable ref s"])
        XCTAssertFalse(engine.hub.isSubscribed(1, to: event))
        XCTAssertEqual(engine.connection(1)?.inFlight, 0)
        XCTAssertEqual(wants(commit(engine, [message(6, event)], now: 3)), [], "not subscribed")

        // Subscribing again (with since_seq) lines up from what the window still holds.
        guard let again = requestSubscribe(engine, 1, event, ref: "s2", sinceSeq: 5, now: 4)?.generation else { return }
        XCTAssertNotEqual(again, generation)
        _ = answerSubscribe(engine, 1, event, again, ref: "s2", historyThrough: 5, now: 4)
        XCTAssertEqual(describe(flush(engine, 1, now: 4)), ["subscribed ref s2", "message 6"])
    }

    func testUnsubscribeBeforeTheAnswerCancelsTheSubscribe() {
        let engine = makeEngine()
        ready(engine, 1)
        guard let generation = requestSubscribe(engine, 1, event, ref: "s", now: 1)?.generation else { return }
        let actions = receive(engine, 1, #"{"op":"unsubscribe","ref":"u","event_id":"\#(idString(event))"}"#, now: 1)
        XCTAssertTrue(jobs(actions).isEmpty)
        XCTAssertEqual(describe(flush(engine, 1, now: 1)), ["unsubscribed ref u"])

        XCTAssertTrue(answerSubscribe(engine, 1, event, generation, ref: "s", historyThrough: 0, now: 2).isEmpty, "the answer is ignored")
        XCTAssertTrue(isIdle(engine.writable(1, now: 2)), "no subscribed frame")
        XCTAssertFalse(engine.hub.isSubscribed(1, to: event))
        XCTAssertEqual(engine.connection(1)?.inFlight, 0)
        XCTAssertEqual(wants(commit(engine, [message(1, event)], now: 3)), [])

        // A later subscribe is not confused with the cancelled one.
        guard let later = requestSubscribe(engine, 1, event, ref: "s3", now: 4)?.generation else { return }
        _ = answerSubscribe(engine, 1, event, later, ref: "s3", historyThrough: 1, now: 4)
        XCTAssertEqual(describe(flush(engine, 1, now: 4)), ["subscribed ref s3"])
        XCTAssertTrue(engine.hub.isSubscribed(1, to: event))
    }

    func testRevokeBetweenSnapshotAndAnswerRefusesTheSubscribe() {
        let engine = makeEngine()
        ready(engine, 1, alice)
        ready(engine, 2, bob)
        guard let g1 = requestSubscribe(engine, 1, event, ref: "s", now: 1)?.generation,
              let g2 = requestSubscribe(engine, 2, event, ref: "t", now: 1)?.generation else { return }

        let actions = engine.committed(CommittedBatch(access: [revoke(alice, from: event, seq: 7)]), now: 2, wall: wall(2))
        XCTAssertTrue(actions.isEmpty, "alice was not subscribed yet: nothing to tell her now")

        // Her snapshot checked access at change 6, before the revoke (7).
        _ = answerSubscribe(engine, 1, event, g1, ref: "s", historyThrough: 0, accessThrough: 6, now: 3)
        // Answered as an event she cannot see (the same as one that does not exist).
        XCTAssertEqual(describe(flush(engine, 1, now: 3)), ["error not_found ref s"])
        XCTAssertFalse(engine.hub.isSubscribed(1, to: event))
        XCTAssertEqual(engine.connection(1)?.inFlight, 0)

        // Bob's access did not change.
        _ = answerSubscribe(engine, 2, event, g2, ref: "t", historyThrough: 0, accessThrough: 6, now: 3)
        XCTAssertEqual(describe(flush(engine, 2, now: 3)), ["subscribed ref t"])
        XCTAssertEqual(wants(commit(engine, [message(1, event)], now: 4)), [2])
    }

    func testAccessGrantedAgainAfterARevokeIsNotRefused() {
        let engine = makeEngine()
        ready(engine, 1, alice)
        guard let generation = requestSubscribe(engine, 1, event, ref: "s", now: 1)?.generation else { return }
        let grant = CommittedBatch<TestFrame>.Access(seq: 8, eventID: event, userID: alice.userID, level: .staff, revokedFrame: nil)
        _ = engine.committed(CommittedBatch(access: [revoke(alice, from: event, seq: 7), grant]), now: 2, wall: wall(2))
        _ = answerSubscribe(engine, 1, event, generation, ref: "s", historyThrough: 0, accessThrough: 6, now: 3)
        XCTAssertEqual(describe(flush(engine, 1, now: 3)), ["subscribed ref s"])
    }

    func testRecentAccessChangesAreRememberedLongEnoughAndBounded() {
        let engine = makeEngine()
        ready(engine, 1, alice)
        var changes = [revoke(alice, from: event, seq: 1)]
        for i in 0..<1_000 {
            changes.append(.init(seq: Int64(2 + i), eventID: UUID(), userID: UUID(), level: .staff, revokedFrame: nil))
        }
        _ = engine.committed(CommittedBatch(access: changes), now: 0, wall: wall(0))

        // Pruning keeps what a snapshot in flight could still need.
        guard let first = requestSubscribe(engine, 1, event, ref: "s1", now: 1)?.generation else { return }
        engine.pongReceived(1, now: 100) // heard from, so the heartbeat leaves it alone
        XCTAssertTrue(engine.tick(now: 100, wall: wall(100)).isEmpty)
        _ = answerSubscribe(engine, 1, event, first, ref: "s1", historyThrough: 0, accessThrough: 0, now: 100)
        XCTAssertEqual(describe(flush(engine, 1, now: 100)), ["error not_found ref s1"])

        // Past 1,000 entries, changes older than five minutes are forgotten.
        engine.pongReceived(1, now: 399)
        guard let second = requestSubscribe(engine, 1, event, ref: "s2", now: 399)?.generation else { return }
        XCTAssertTrue(engine.tick(now: 400, wall: wall(400)).isEmpty)
        _ = answerSubscribe(engine, 1, event, second, ref: "s2", historyThrough: 0, accessThrough: 0, now: 400)
        XCTAssertEqual(describe(flush(engine, 1, now: 400)), ["subscribed ref s2"])
    }

    func testARefusedSubscribeDoesNotCancelTheOneInFlight() {
        // Nothing may be held: the second subscribe is refused (see FanoutEngineBackPressureTests.swift).
        let engine = makeEngine { $0.maxInFlightPerConnection = 1; $0.maxHeldPerConnection = 0 }
        ready(engine, 1)
        guard let generation = requestSubscribe(engine, 1, event, ref: "s1", now: 1)?.generation else { return }
        let actions = receive(engine, 1, #"{"op":"subscribe","ref":"s2","event_id":"\#(idString(event))"}"#, now: 1)
        XCTAssertTrue(jobs(actions).isEmpty)
        XCTAssertEqual(describe(flush(engine, 1, now: 1)), ["error rate_limited ref s2"])

        // The first subscribe was not touched by the refused one: its answer still counts.
        _ = answerSubscribe(engine, 1, event, generation, ref: "s1", historyThrough: 0, now: 2)
        XCTAssertEqual(describe(flush(engine, 1, now: 2)), ["subscribed ref s1"])
        XCTAssertTrue(engine.hub.isSubscribed(1, to: event))
    }

    // MARK: - fan-out

    func testOneMessageReachesEverySubscriberAsTheSameFrame() {
        let engine = makeEngine()
        let users = [alice, bob, carol]
        for id in 1...5 { ready(engine, id, users[id % 3], events: [event]) }
        ready(engine, 6, bob, events: [other])
        ready(engine, 7, carol, events: [event])
        receive(engine, 7, #"{"op":"unsubscribe","event_id":"\#(idString(event))"}"#, now: 1)
        XCTAssertEqual(ops(flush(engine, 7, now: 1)), ["unsubscribed"])
        ready(engine, 8, alice)
        XCTAssertEqual(engine.hub.subscriberCount(of: event), 5)

        let m = message(1, event)
        let actions = commit(engine, [m], now: 2)
        XCTAssertEqual(wants(actions).sorted(), [1, 2, 3, 4, 5])
        for id in 1...5 {
            let step = frames(engine.writable(id, now: 2))
            XCTAssertEqual(step.frames.count, 1)
            XCTAssertTrue(step.frames.first === m.frame, "connection \(id) gets the one encoded frame")
            XCTAssertFalse(step.more)
        }
        for id in 6...8 { XCTAssertTrue(isIdle(engine.writable(id, now: 2)), "connection \(id)") }
        XCTAssertEqual(engine.stats.messagesFannedOut, 1)
        XCTAssertEqual(wants(commit(engine, [m], now: 2)), [], "a seq already published goes to nobody")

        // A message of the other event goes only to its subscriber.
        XCTAssertEqual(wants(commit(engine, [message(2, other)], now: 3)), [6])
    }

    func testNotificationsReachEveryConnectionOfTheirUser() {
        let engine = makeEngine()
        ready(engine, 1, alice, events: [event])
        ready(engine, 2, alice)
        ready(engine, 3, bob, events: [event])
        let n = notification(for: alice)
        let actions = engine.committed(CommittedBatch(notifications: [n]), now: 1, wall: wall(1))
        XCTAssertEqual(wants(actions).sorted(), [1, 2])
        for id in [1, 2] {
            let written = flush(engine, id, now: 1)
            XCTAssertEqual(written.frames.count, 1)
            XCTAssertTrue(written.frames.first === n.frame)
            XCTAssertEqual(ops(written), ["notification"])
        }
        XCTAssertTrue(isIdle(engine.writable(3, now: 1)))

        // In one batch, messages go before notifications.
        _ = engine.committed(CommittedBatch(messages: [message(1, event)], notifications: [notification(for: alice)]), now: 2, wall: wall(2))
        XCTAssertEqual(describe(flush(engine, 1, now: 2)), ["message 1", "notification"])
    }

    func testAccessRevokedSendsAccessRevokedAndStopsThatEventsMessages() {
        let engine = makeEngine()
        ready(engine, 1, alice, events: [event, other])
        ready(engine, 2, alice, events: [event])
        ready(engine, 3, bob, events: [event])
        let change = revoke(alice, from: event, seq: 1)
        let actions = engine.committed(CommittedBatch(access: [change], messages: [message(1, event), message(2, other)]),
                                       now: 1, wall: wall(1))
        XCTAssertEqual(notices(actions).count, 2)
        XCTAssertTrue(notices(actions).contains(.accessRevoked(connection: 1, event: event)))
        XCTAssertTrue(notices(actions).contains(.accessRevoked(connection: 2, event: event)))
        XCTAssertEqual(wants(actions).sorted(), [1, 2, 3])

        // Access changes apply first: the message committed with the revoke does not reach her.
        let first = flush(engine, 1, now: 1)
        XCTAssertEqual(describe(first), ["access_revoked", "message 2"])
        XCTAssertTrue(first.frames.first === change.revokedFrame)
        XCTAssertEqual(first.frames.first.flatMap { decode($0) }, .accessRevoked(eventID: event))
        XCTAssertEqual(describe(flush(engine, 2, now: 1)), ["access_revoked"])
        XCTAssertEqual(describe(flush(engine, 3, now: 1)), ["message 1"])
        XCTAssertFalse(engine.hub.isSubscribed(1, to: event))
        XCTAssertTrue(engine.hub.isSubscribed(1, to: other))

        // Later messages of that event go only to bob.
        XCTAssertEqual(wants(commit(engine, [message(3, event)], now: 2)), [3])
        XCTAssertEqual(wants(commit(engine, [message(4, other)], now: 2)), [1])
        XCTAssertTrue(engine.connection(1)?.isOpen ?? false, "the connection itself stays open")
    }

    // MARK: - revoked tokens

    func testRevokedTokenClosesItsConnectionsWith4401() {
        let engine = makeEngine { $0.closeTimeout = 2 }
        ready(engine, 1, alice, token: tokenA, events: [event])
        ready(engine, 2, bob, token: tokenB, events: [event])
        ready(engine, 3, alice, token: tokenA)
        ready(engine, 4, carol, token: nil, events: [event])
        XCTAssertEqual(wants(commit(engine, [message(1, event)], now: 10)).sorted(), [1, 2, 4])

        let actions = engine.committed(CommittedBatch(revokedTokens: [tokenA], messages: [message(2, event)]), now: 10, wall: wall(10))
        XCTAssertEqual(notices(actions).count, 2)
        XCTAssertTrue(notices(actions).contains(.tokenRevoked(connection: 1)))
        XCTAssertTrue(notices(actions).contains(.tokenRevoked(connection: 3)))
        XCTAssertEqual(wants(actions), [3], "1, 2 and 4 already wait for a writable")
        XCTAssertEqual(engine.stats.tokenRevocationsClosed, 2)

        // Closed at once, whatever was queued; nothing more reaches them.
        guard case .close(4401, let reason) = engine.writable(1, now: 10) else { return XCTFail("expected close 4401") }
        XCTAssertEqual(reason, "token revoked")
        XCTAssertEqual(closeCode(engine.writable(3, now: 10)), 4401)
        XCTAssertEqual(engine.connection(1)?.queuedFrames, 1, "message 2 was not queued")
        XCTAssertFalse(engine.hub.isSubscribed(1, to: event))
        XCTAssertTrue(jobs(receive(engine, 1, #"{"op":"list_events"}"#, now: 10)).isEmpty, "no new work from a closing connection")
        XCTAssertEqual(closeCode(engine.writable(1, now: 10)), 4401)

        // Other tokens are untouched.
        XCTAssertEqual(describe(flush(engine, 2, now: 10)), ["message 1", "message 2"])
        XCTAssertEqual(describe(flush(engine, 4, now: 10)), ["message 1", "message 2"])
        XCTAssertTrue(engine.connection(2)?.isOpen ?? false)

        // A connection that misses its close deadline is dropped.
        XCTAssertEqual(drops(engine.tick(now: 11.9, wall: wall(11.9))), [])
        XCTAssertEqual(drops(engine.tick(now: 12, wall: wall(12))), [1, 3])
        engine.connectionClosed(1)
        engine.connectionClosed(3)
        XCTAssertEqual(drops(engine.tick(now: 13, wall: wall(13))), [])
        XCTAssertEqual(engine.hub.connections(ofUser: alice.userID), [])
    }

    // MARK: - slow clients

    func testAQueueOverItsFrameBoundClosesTheClientWith4008() {
        let engine = makeEngine { $0.outboundMaxFrames = 4; $0.closeTimeout = 2 }
        ready(engine, 1, alice, events: [event])
        ready(engine, 2, bob, events: [event])
        for seq in 1...4 {
            _ = commit(engine, [message(Int64(seq), event)], now: 1)
            XCTAssertEqual(describe(flush(engine, 2, now: 1)), ["message \(seq)"])
        }
        XCTAssertEqual(engine.connection(1)?.queuedFrames, 4)

        let actions = commit(engine, [message(5, event)], now: 1)
        XCTAssertEqual(notices(actions), [.slowClient(connection: 1, queuedFrames: 4)])
        XCTAssertEqual(engine.stats.slowClientsClosed, 1)
        let connection = engine.connection(1)
        XCTAssertEqual(connection?.queuedFrames, 0, "its queue is released")
        XCTAssertEqual(connection?.queuedBytes, 0)
        XCTAssertFalse(connection?.isOpen ?? true)
        guard case .close(4008, let reason) = engine.writable(1, now: 1) else { return XCTFail("expected close 4008") }
        XCTAssertTrue(reason.contains("since_seq"), reason)

        // It gets nothing more; the other subscriber everything.
        _ = commit(engine, [message(6, event)], now: 1)
        XCTAssertEqual(engine.connection(1)?.queuedFrames, 0)
        XCTAssertFalse(engine.hub.isSubscribed(1, to: event))
        XCTAssertEqual(describe(flush(engine, 2, now: 1)), ["message 5", "message 6"])
        XCTAssertEqual(engine.stats.slowClientsClosed, 1)
        XCTAssertEqual(drops(engine.tick(now: 3, wall: wall(3))), [1])
    }

    func testAQueueOverItsByteBoundClosesTheClientWith4008() {
        let size = message(1, event).frame.wireLength
        let engine = makeEngine { $0.outboundMaxBytes = 2 * size + size / 2 }
        ready(engine, 1, events: [event])
        _ = commit(engine, [message(1, event), message(2, event)], now: 1)
        XCTAssertEqual(engine.connection(1)?.queuedBytes, 2 * size)
        let actions = commit(engine, [message(3, event)], now: 1)
        XCTAssertEqual(notices(actions), [.slowClient(connection: 1, queuedFrames: 2)])
        XCTAssertEqual(engine.connection(1)?.queuedBytes, 0)
        XCTAssertEqual(closeCode(engine.writable(1, now: 1)), 4008)
    }

    // MARK: - write stalls

    func testAReaderThatStopsReadingIsDropped() {
        let engine = makeEngine { $0.writeStallTimeout = 15; $0.heartbeatInterval = 20 }
        ready(engine, 1, alice, events: [event])
        ready(engine, 2, bob, events: [event])
        _ = commit(engine, [message(1, event)], now: 1)
        XCTAssertEqual(describe(flush(engine, 2, now: 1)), ["message 1"])
        engine.pongReceived(1, now: 10) // it still answers heartbeats; it just does not read

        XCTAssertTrue(engine.tick(now: 15.9, wall: wall(15.9)).isEmpty)
        let actions = engine.tick(now: 16, wall: wall(16))
        XCTAssertEqual(drops(actions), [1])
        XCTAssertEqual(notices(actions), [.writeStalled(connection: 1)])
        XCTAssertEqual(engine.stats.stalledClientsDropped, 1)
        XCTAssertEqual(engine.connection(1)?.queuedFrames, 0, "its memory is released at once")
        XCTAssertFalse(engine.connection(1)?.isOpen ?? true)
        XCTAssertEqual(wants(commit(engine, [message(2, event)], now: 16)), [2])
        XCTAssertEqual(engine.connection(1)?.queuedFrames, 0)

        // Dropped again until the transport reports it closed, counted once.
        XCTAssertEqual(drops(engine.tick(now: 17, wall: wall(17))), [1])
        XCTAssertEqual(engine.stats.stalledClientsDropped, 1)
        engine.connectionClosed(1)
        XCTAssertEqual(drops(engine.tick(now: 18, wall: wall(18))), [])
    }

    func testAConnectionThatKeepsMakingProgressIsNeverDropped() {
        let engine = makeEngine { $0.writeStallTimeout = 15; $0.maxWriteBytes = 1 } // one frame per write
        ready(engine, 1, events: [event])
        var seq: Int64 = 0
        for second in 1...100 {
            let now = Double(second)
            seq += 2
            _ = commit(engine, [message(seq - 1, event), message(seq, event)], now: now)
            // A slow socket: one frame a second, while two arrive.
            XCTAssertEqual(frames(engine.writable(1, now: now)).frames.count, 1)
            engine.pongReceived(1, now: now)
            let actions = engine.tick(now: now + 0.5, wall: wall(now + 0.5))
            XCTAssertEqual(drops(actions), [], "second \(second)")
            XCTAssertTrue(notices(actions).isEmpty, "second \(second)")
        }
        XCTAssertEqual(engine.connection(1)?.queuedFrames, 100)
        XCTAssertTrue(engine.connection(1)?.isOpen ?? false)
        XCTAssertEqual(engine.stats.stalledClientsDropped, 0)
    }

    // MARK: - heartbeats

    func testASilentConnectionIsPingedAndThePongRecordsTheRoundTrip() throws {
        let engine = makeEngine { $0.heartbeatInterval = 20 }
        ready(engine, 1)
        XCTAssertTrue(engine.tick(now: 19.9, wall: wall(19.9)).isEmpty)
        let actions = engine.tick(now: 20, wall: wall(20))
        XCTAssertEqual(actions.count, 1)
        XCTAssertEqual(wants(actions), [1])
        XCTAssertTrue(engine.tick(now: 21, wall: wall(21)).isEmpty, "one ping at a time")

        guard case .ping(let more) = engine.writable(1, now: 20.5) else { return XCTFail("expected a ping") }
        XCTAssertFalse(more)
        XCTAssertTrue(isIdle(engine.writable(1, now: 20.5)))
        XCTAssertTrue(engine.tick(now: 25, wall: wall(25)).isEmpty, "its answer is awaited")

        engine.pongReceived(1, now: 20.75)
        XCTAssertEqual(try XCTUnwrap(engine.connection(1)?.lastRTT), 0.25, accuracy: 1e-9)
        XCTAssertTrue(engine.tick(now: 40, wall: wall(40)).isEmpty, "heard 19.25 s ago")
        XCTAssertEqual(wants(engine.tick(now: 40.75, wall: wall(40.75))), [1], "silent again: pinged again")
    }

    func testAPingGoesOutBeforeQueuedFrames() {
        let engine = makeEngine { $0.heartbeatInterval = 20 }
        ready(engine, 1, events: [event])
        XCTAssertEqual(wants(engine.tick(now: 20, wall: wall(20))), [1])
        XCTAssertEqual(wants(commit(engine, [message(1, event)], now: 20)), [])
        guard case .ping(let more) = engine.writable(1, now: 20) else { return XCTFail("expected a ping") }
        XCTAssertTrue(more)
        let step = frames(engine.writable(1, now: 20))
        XCTAssertEqual(describe(step.frames), ["message 1"])
        XCTAssertFalse(step.more)
    }

    func testSilentForTwoIntervalsIsClosedThenDroppedAfterTheCloseTimeout() {
        let engine = makeEngine { $0.heartbeatInterval = 20; $0.closeTimeout = 2 }
        ready(engine, 1, alice, events: [event])
        ready(engine, 2, bob) // talks every 10 s: never pinged, never closed
        func talk(_ now: Double) {
            receive(engine, 2, #"{"op":"ping"}"#, now: now)
            XCTAssertEqual(ops(flush(engine, 2, now: now)), ["pong"])
        }
        talk(10)
        talk(20)
        XCTAssertEqual(wants(engine.tick(now: 20, wall: wall(20))), [1])
        XCTAssertEqual(flush(engine, 1, now: 20).pings, 1)
        talk(30)
        XCTAssertTrue(engine.tick(now: 39.9, wall: wall(39.9)).isEmpty)
        talk(40)

        let actions = engine.tick(now: 40, wall: wall(40))
        XCTAssertEqual(notices(actions), [.heartbeatTimeout(connection: 1)])
        XCTAssertEqual(wants(actions), [1])
        XCTAssertEqual(engine.stats.heartbeatTimeouts, 1)
        XCTAssertFalse(engine.hub.isSubscribed(1, to: event))
        guard case .close(1001, let reason) = engine.writable(1, now: 40) else { return XCTFail("expected close 1001") }
        XCTAssertEqual(reason, "no answer to heartbeat")

        XCTAssertEqual(drops(engine.tick(now: 41.9, wall: wall(41.9))), [])
        XCTAssertEqual(drops(engine.tick(now: 42, wall: wall(42))), [1])
        XCTAssertEqual(engine.stats.heartbeatTimeouts, 1)
        XCTAssertTrue(engine.connection(2)?.isOpen ?? false)
        XCTAssertNil(engine.connection(2)?.lastRTT, "never pinged")
    }

    // MARK: - rate limits

    func testSendsAreLimitedToABurstThenARate() {
        let engine = makeEngine { $0.sendBurst = 3; $0.sendRatePerSecond = 1 }
        ready(engine, 1)
        for i in 0..<3 { XCTAssertEqual(jobs(receive(engine, 1, sendJSON("s\(i)"), now: 0)).count, 1) }
        XCTAssertTrue(jobs(receive(engine, 1, sendJSON("s3"), now: 0)).isEmpty)
        let written = flush(engine, 1, now: 0)
        XCTAssertEqual(written.frames.compactMap { decode($0) },
                       [.error(ref: "s3", FanoutEngine<TestFrame>.sendRateLimited(engine.configuration))])
        XCTAssertEqual(FanoutEngine<TestFrame>.sendRateLimited(engine.configuration).code, .rateLimited)

        XCTAssertTrue(jobs(receive(engine, 1, sendJSON("s4"), now: 0.5)).isEmpty, "half a token")
        XCTAssertEqual(describe(flush(engine, 1, now: 0.5)), ["error rate_limited ref s4"])
        XCTAssertEqual(jobs(receive(engine, 1, sendJSON("s5"), now: 1.5)).count, 1, "refilled")
        XCTAssertTrue(jobs(receive(engine, 1, sendJSON("s6"), now: 1.5)).isEmpty)
        XCTAssertEqual(jobs(receive(engine, 1, #"{"op":"list_events"}"#, now: 1.5)).count, 1, "other ops are not sends")
        XCTAssertEqual(engine.connection(1)?.inFlight, 5)

        // Each connection has its own bucket.
        ready(engine, 2, bob, now: 1.5)
        XCTAssertEqual(jobs(receive(engine, 2, sendJSON("b"), now: 1.5)).count, 1)
    }

    // MARK: - draining

    func testDrainFlushesQueuesAndAnswersThenClosesWith1001() {
        let engine = makeEngine { $0.closeTimeout = 2; $0.writeStallTimeout = 15 }
        ready(engine, 1, alice, events: [event])
        ready(engine, 2, bob, events: [event])
        ready(engine, 3, carol)
        _ = commit(engine, [message(1, event)], now: 1)
        XCTAssertEqual(describe(flush(engine, 2, now: 1)), ["message 1"])
        XCTAssertEqual(jobs(receive(engine, 1, #"{"op":"list_events","ref":"q1"}"#, now: 1)).count, 1)
        XCTAssertEqual(jobs(receive(engine, 3, #"{"op":"history","ref":"h3","event_id":"\#(idString(event))"}"#, now: 1)).count, 1)

        let actions = engine.beginDrain(now: 2)
        XCTAssertTrue(engine.draining)
        XCTAssertFalse(engine.isDrained)
        XCTAssertEqual(wants(actions).sorted(), [2, 3], "1 already waits for a writable")
        XCTAssertEqual(engine.hub.subscriberCount(of: event), 0, "no live traffic while draining")

        // 2 has nothing waiting: it closes at once.
        guard case .close(1001, let reason) = engine.writable(2, now: 2) else { return XCTFail("expected close 1001") }
        XCTAssertEqual(reason, "server shutting down; reconnect")

        // 1 gets its queue first; its request is still out, so no close yet.
        var step = frames(engine.writable(1, now: 2))
        XCTAssertEqual(describe(step.frames), ["message 1"])
        XCTAssertFalse(step.more)
        XCTAssertTrue(isIdle(engine.writable(1, now: 2)))
        XCTAssertTrue(isIdle(engine.writable(3, now: 2)), "3 waits on its answer")

        // New requests are refused with `unavailable`; a ping is still answered.
        let late = receive(engine, 1, #"{"op":"list_events","ref":"late"}"#, now: 2)
        XCTAssertTrue(jobs(late).isEmpty)
        XCTAssertEqual(wants(late), [1])
        receive(engine, 1, #"{"op":"ping","ref":"p"}"#, now: 2)
        var written = flush(engine, 1, now: 2)
        XCTAssertEqual(describe(written), ["error unavailable ref late", "pong ref p"])
        XCTAssertNil(written.close, "its request is still out")
        XCTAssertEqual(wants(commit(engine, [message(2, event)], now: 2)), [])

        // The answer comes back: written, then the close.
        XCTAssertEqual(wants(engine.jobCompleted(connection: 1, ref: "q1", outcome: .reply(replyFrame(.events(ref: "q1", events: []))),
                                                 now: 3, wall: wall(3))), [1])
        step = frames(engine.writable(1, now: 3))
        XCTAssertEqual(describe(step.frames), ["events ref q1"])
        XCTAssertTrue(step.more, "the close is next")
        XCTAssertEqual(closeCode(engine.writable(1, now: 3)), 1001)

        // An answer that queues nothing still lets the close go.
        XCTAssertEqual(wants(engine.jobCompleted(connection: 3, ref: "h3", outcome: .failed(.notFound("no such event")),
                                                 now: 3, wall: wall(3))), [3])
        written = flush(engine, 3, now: 3)
        XCTAssertEqual(describe(written), ["error not_found ref h3"])
        XCTAssertEqual(written.close?.code, 1001)

        engine.connectionClosed(1)
        engine.connectionClosed(2)
        XCTAssertFalse(engine.isDrained)
        engine.connectionClosed(3)
        XCTAssertTrue(engine.isDrained)
        XCTAssertEqual(engine.stats.connectionsClosed, 3)
    }

    func testADrainingConnectionWhoseAnswerNeverComesIsDroppedAtItsDeadline() {
        let engine = makeEngine { $0.closeTimeout = 2; $0.writeStallTimeout = 15 }
        ready(engine, 1)
        _ = receive(engine, 1, #"{"op":"list_events"}"#, now: 1)
        _ = engine.beginDrain(now: 10)
        XCTAssertTrue(isIdle(engine.writable(1, now: 10)))
        XCTAssertEqual(drops(engine.tick(now: 24.9, wall: wall(24.9))), [], "heartbeats and stalls no longer apply")
        XCTAssertEqual(drops(engine.tick(now: 25, wall: wall(25))), [1], "max(closeTimeout, writeStallTimeout) after the drain began")
    }

    func testRequestsDuringDrainAreRefusedWithUnavailable() {
        let engine = makeEngine()
        ready(engine, 1)
        receive(engine, 1, #"{"op":"list_events","ref":"busy"}"#, now: 1) // keeps the connection from closing at once
        _ = engine.beginDrain(now: 1)
        for (i, text) in [sendJSON("a"), #"{"op":"subscribe","ref":"b","event_id":"\#(idString(event))"}"#,
                          #"{"op":"history","ref":"c","event_id":"\#(idString(event))"}"#].enumerated() {
            let actions = receive(engine, 1, text, now: 2)
            XCTAssertTrue(jobs(actions).isEmpty, "request \(i)")
        }
        XCTAssertEqual(describe(flush(engine, 1, now: 2)), ["error unavailable ref a", "error unavailable ref b", "error unavailable ref c"])
        XCTAssertEqual(engine.connection(1)?.inFlight, 1)
    }

    func testAConnectionOpenedDuringDrainIsClosedAtOnce() {
        let engine = makeEngine { $0.closeTimeout = 2 }
        XCTAssertTrue(engine.beginDrain(now: 0).isEmpty)
        XCTAssertTrue(engine.isDrained, "nothing open")
        let actions = open(engine, 1, now: 1)
        XCTAssertEqual(wants(actions), [1])
        XCTAssertFalse(engine.isDrained)
        let written = flush(engine, 1, now: 1)
        XCTAssertTrue(written.frames.isEmpty, "no hello")
        XCTAssertEqual(written.close?.code, 1001)
        XCTAssertTrue(jobs(receive(engine, 1, #"{"op":"list_events"}"#, now: 1)).isEmpty)
        XCTAssertEqual(drops(engine.tick(now: 3, wall: wall(3))), [1], "closed at once: closeTimeout applies")
        engine.connectionClosed(1)
        XCTAssertTrue(engine.isDrained)
    }

    func testASubscribeAnsweredWhileClosingJoinsNoChannel() {
        let engine = makeEngine()
        ready(engine, 1, alice)
        ready(engine, 2, bob, token: tokenB)
        guard let g1 = requestSubscribe(engine, 1, event, ref: "s", now: 1)?.generation,
              let g2 = requestSubscribe(engine, 2, event, ref: "t", now: 1)?.generation else { return }

        // 2's token is revoked (closed at once); then 1 drains (closed after its queue and answers).
        _ = engine.committed(CommittedBatch(revokedTokens: [tokenB]), now: 2, wall: wall(2))
        _ = engine.beginDrain(now: 2)
        _ = answerSubscribe(engine, 1, event, g1, ref: "s", historyThrough: 0, now: 3)
        _ = answerSubscribe(engine, 2, event, g2, ref: "t", historyThrough: 0, now: 3)
        XCTAssertFalse(engine.hub.isSubscribed(1, to: event))
        XCTAssertFalse(engine.hub.isSubscribed(2, to: event))
        XCTAssertEqual(engine.hub.subscriberCount(of: event), 0)
        XCTAssertEqual(wants(commit(engine, [message(1, event)], now: 3)), [])

        // The draining one is answered (it will not get live messages here), then closed.
        let written = flush(engine, 1, now: 3)
        XCTAssertEqual(describe(written), ["error unavailable ref s"])
        XCTAssertEqual(written.close?.code, 1001)
        XCTAssertEqual(closeCode(engine.writable(2, now: 3)), 4401)
    }

    // MARK: - closing

    func testConnectionClosedForgetsEverything() {
        let engine = makeEngine()
        ready(engine, 1, alice, events: [event, other])
        ready(engine, 2, bob, events: [event])
        receive(engine, 1, #"{"op":"list_events","ref":"q"}"#, now: 1)
        _ = commit(engine, [message(1, event)], now: 1)
        XCTAssertEqual(engine.hub.subscriberCount(of: event), 2)

        engine.connectionClosed(1)
        XCTAssertNil(engine.connection(1))
        XCTAssertEqual(engine.stats.connectionsClosed, 1)
        XCTAssertEqual(engine.hub.subscriberCount(of: event), 1)
        XCTAssertEqual(engine.hub.subscriberCount(of: other), 0)
        XCTAssertEqual(engine.hub.connections(ofUser: alice.userID), [])
        XCTAssertTrue(isIdle(engine.writable(1, now: 1)))
        XCTAssertTrue(receive(engine, 1, #"{"op":"ping"}"#, now: 1).isEmpty)
        engine.pongReceived(1, now: 1)
        XCTAssertTrue(engine.jobCompleted(connection: 1, ref: "q", outcome: .reply(replyFrame(.events(ref: "q", events: []))),
                                          now: 2, wall: wall(2)).isEmpty)
        XCTAssertEqual(wants(commit(engine, [message(2, other)], now: 2)), [])
        XCTAssertTrue(engine.committed(CommittedBatch(notifications: [notification(for: alice)]), now: 2, wall: wall(2)).isEmpty)
        XCTAssertTrue(engine.tick(now: 100, wall: wall(100)).allSatisfy {
            if case .drop(1) = $0 { return false }
            if case .wantWritable(1) = $0 { return false }
            return true
        })

        engine.connectionClosed(1)
        XCTAssertEqual(engine.stats.connectionsClosed, 1, "closing twice counts once")
        engine.connectionClosed(2)
        XCTAssertEqual(engine.hub.subscriberCount(of: event), 0)
        XCTAssertEqual(engine.hub.connectionCount, 0)
        XCTAssertTrue(engine.connections.isEmpty)
        XCTAssertEqual(engine.stats.connectionsOpened, 2)
        XCTAssertFalse(engine.isDrained, "not draining")
    }

    func testStatsAdd() {
        var a = EngineStats()
        a.connectionsOpened = 1; a.connectionsClosed = 2; a.framesDelivered = 3; a.messagesFannedOut = 4
        a.slowClientsClosed = 5; a.stalledClientsDropped = 6; a.heartbeatTimeouts = 7; a.tokenRevocationsClosed = 8
        let sum = a + a
        XCTAssertEqual([sum.connectionsOpened, sum.connectionsClosed, sum.framesDelivered, sum.messagesFannedOut,
                        sum.slowClientsClosed, sum.stalledClientsDropped, sum.heartbeatTimeouts, sum.tokenRevocationsClosed],
                       [2, 4, 6, 8, 10, 12, 14, 16])
        XCTAssertEqual(EngineStats() + a, a)
    }
}
