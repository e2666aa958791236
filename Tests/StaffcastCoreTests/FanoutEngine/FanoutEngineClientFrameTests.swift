import Foundation
import StaffcastCore
import XCTest

/// What a client sends: pings, malformed, binary, fragmented and oversized frames, each request
/// becoming its job and its answer, and the send rate limit.
final class FanoutEngineClientFrameTests: FanoutEngineTestCase {
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

    // MARK: - rate limits

    /// A send refused unavailable (the database down, no room in the queue) gives back its place
    /// in the send rate limit; one the database refused (a duplicate) does not: it cost a
    /// transaction.
    func testASendThatStoredNothingDoesNotCountAgainstTheLimit() {
        let engine = makeEngine { $0.sendBurst = 2; $0.sendRatePerSecond = 0.001 }
        ready(engine, 1)
        for i in 0..<4 {
            XCTAssertEqual(jobs(receive(engine, 1, sendJSON("s\(i)"), now: 0)).count, 1, "send \(i)")
            _ = i % 2 == 0
                ? engine.jobCompleted(connection: 1, ref: "s\(i)", outcome: .failed(.unavailable("The database is down.")), now: 0, wall: wall(0), wasSend: true)
                : engine.jobRefused(connection: 1, ref: "s\(i)", now: 0, wasSend: true)
        }
        XCTAssertEqual(jobs(receive(engine, 1, sendJSON("a"), now: 0)).count, 1)
        XCTAssertEqual(jobs(receive(engine, 1, sendJSON("b"), now: 0)).count, 1)
        XCTAssertTrue(jobs(receive(engine, 1, sendJSON("c"), now: 0)).isEmpty, "sends in flight still count")
        // A refusal the database decided, and another op's failure, give nothing back.
        _ = engine.jobCompleted(connection: 1, ref: "a", outcome: .failed(StaffcastError(.conflict, "sent already")), now: 0, wall: wall(0), wasSend: true)
        XCTAssertTrue(jobs(receive(engine, 1, sendJSON("d"), now: 0)).isEmpty)
        _ = engine.jobCompleted(connection: 1, ref: "b", outcome: .failed(.unavailable("down")), now: 0, wall: wall(0))
        XCTAssertTrue(jobs(receive(engine, 1, sendJSON("e"), now: 0)).isEmpty)
    }

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
}
