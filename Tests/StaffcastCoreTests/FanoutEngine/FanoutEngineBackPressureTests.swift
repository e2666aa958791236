import Foundation
import StaffcastCore
import XCTest

/// Back-pressure (`FanoutEngine+BackPressure`): a connection that keeps many requests waiting
/// on the database is slowed down by the transport no longer reading it, never refused for
/// it; only the per-connection send rate limit refuses, and its refusal names that limit.
final class FanoutEngineBackPressureTests: FanoutEngineTestCase {
    func pauses(_ actions: [EngineAction]) -> [Int] {
        actions.compactMap { if case .pauseReading(let id) = $0 { return id } else { return nil } }
    }

    func resumes(_ actions: [EngineAction]) -> [Int] {
        actions.compactMap { if case .resumeReading(let id) = $0 { return id } else { return nil } }
    }

    func listEvents(_ ref: String) -> String { #"{"op":"list_events","ref":"\#(ref)"}"# }

    func answerEvents(_ engine: Engine, _ ref: String, now: Double = 1) -> [EngineAction] {
        engine.jobCompleted(connection: 1, ref: ref, outcome: .reply(replyFrame(.events(ref: ref, events: []))), now: now, wall: wall(now))
    }

    func testAFullWindowStopsReadingAndHoldsWhatWasAlreadyReadInsteadOfRefusingIt() {
        let engine = makeEngine { $0.maxInFlightPerConnection = 2 }
        ready(engine, 1)
        var actions = receive(engine, 1, listEvents("r1"), now: 1)
        XCTAssertEqual(jobs(actions).map(\.ref), ["r1"])
        XCTAssertEqual(pauses(actions), [])
        actions = receive(engine, 1, sendJSON("r2"), now: 1)
        XCTAssertEqual(jobs(actions).map(\.ref), ["r2"])
        XCTAssertEqual(pauses(actions), [1], "the window is full: stop reading")
        XCTAssertEqual(engine.connection(1)?.readingPaused, true)

        // Frames the transport had already read still arrive: held, not refused, not run yet.
        actions = receive(engine, 1, listEvents("r3"), now: 1)
        XCTAssertTrue(jobs(actions).isEmpty)
        XCTAssertEqual(pauses(actions), [], "asked once")
        receive(engine, 1, sendJSON("r4"), now: 1)
        XCTAssertEqual(engine.connection(1)?.heldRequests, 2)
        XCTAssertEqual(engine.connection(1)?.queuedFrames, 0, "nothing refused")

        // Each answer lets the next held request run, in the order they were read.
        actions = answerEvents(engine, "r1")
        XCTAssertEqual(jobs(actions).map(\.ref), ["r3"])
        XCTAssertEqual(resumes(actions), [], "still full")
        actions = answerEvents(engine, "r2")
        XCTAssertEqual(jobs(actions).map(\.ref), ["r4"])
        XCTAssertEqual(resumes(actions), [])
        XCTAssertEqual(engine.connection(1)?.heldRequests, 0)
        // Reading resumes once at most half the window is in flight.
        actions = answerEvents(engine, "r3")
        XCTAssertEqual(resumes(actions), [1])
        XCTAssertEqual(engine.connection(1)?.readingPaused, false)
        XCTAssertEqual(engine.connection(1)?.inFlight, 1)
        XCTAssertEqual(describe(flush(engine, 1, now: 1)), ["events ref r1", "events ref r2", "events ref r3"])

        // Pings never wait on the database: answered at once even while the window is full.
        receive(engine, 1, listEvents("r5"), now: 2)
        receive(engine, 1, listEvents("r6"), now: 2)
        receive(engine, 1, #"{"op":"ping","ref":"p"}"#, now: 2)
        XCTAssertEqual(describe(flush(engine, 1, now: 2)), ["pong ref p"])
        XCTAssertEqual(engine.connection(1)?.heldRequests, 1)
    }

    /// A publisher with 3,000 sends back to back, read only while the engine lets the
    /// transport read, answered in batches as a group commit would: every send runs once, in
    /// the order it was sent, and nothing is refused.
    func testThreeThousandSendsInFlightAreAllRunInOrderAndNoneRefused() {
        let engine = makeEngine {
            $0.sendBurst = 10_000
            $0.sendRatePerSecond = 10_000
        }
        ready(engine, 1)
        let total = 3_000
        var nextToSend = 0
        var paused = false
        var waiting: [String] = [] // jobs run, not yet answered, in order
        var ran: [String] = []
        var pausesSeen = 0
        func apply(_ actions: [EngineAction]) {
            for action in actions {
                switch action {
                case .pauseReading: paused = true; pausesSeen += 1
                case .resumeReading: paused = false
                case .run(let job):
                    guard case .client(.send) = job.request, let ref = job.ref else { return XCTFail("unexpected job \(job)") }
                    waiting.append(ref)
                    ran.append(ref)
                default: break
                }
            }
        }
        var rounds = 0
        while ran.count < total || !waiting.isEmpty {
            rounds += 1
            guard rounds < 10_000 else { return XCTFail("no progress: \(ran.count) ran, \(waiting.count) waiting") }
            // The transport reads while it may; a read delivers a few frames at once, so one or
            // two may arrive after the pause (as libwebsockets finishes its buffer).
            while nextToSend < total {
                let wasPaused = paused
                for _ in 0..<3 where nextToSend < total {
                    apply(receive(engine, 1, sendJSON("s\(nextToSend)"), now: 1))
                    nextToSend += 1
                }
                if wasPaused || paused { break }
            }
            // A batch commits: up to 20 answers, in order.
            for ref in waiting.prefix(20) {
                let sent = StaffMessage(id: UUID(), seq: 1, eventID: event, senderID: alice.userID, senderName: "Alice",
                                        message: "Gates open", messageType: .broadcast, priority: .normal, sentAt: wall0,
                                        expiresAt: nil, read: false, readCount: 0)
                apply(engine.jobCompleted(connection: 1, ref: ref, outcome: .reply(replyFrame(.sent(ref: ref, message: sent))),
                                          now: 1, wall: wall(1)))
            }
            waiting.removeFirst(min(20, waiting.count))
            XCTAssertLessThanOrEqual(engine.connection(1)?.inFlight ?? 0, engine.configuration.maxInFlightPerConnection)
            let written = flush(engine, 1, now: 1)
            XCTAssertFalse(ops(written).contains("error"), "nothing refused: \(describe(written).filter { $0.hasPrefix("error") })")
        }
        XCTAssertEqual(ran, (0..<total).map { "s\($0)" }, "each send runs once, in the order it was sent")
        XCTAssertGreaterThan(pausesSeen, 1, "the publisher was slowed down by reading, many times")
        XCTAssertEqual(engine.connection(1)?.readingPaused, false)
        XCTAssertEqual(engine.connection(1)?.inFlight, 0)
    }

    func testHeldRequestsPastTheirBoundAreRefusedSayingSo() throws {
        let engine = makeEngine {
            $0.maxInFlightPerConnection = 1
            $0.maxHeldPerConnection = 2
        }
        ready(engine, 1)
        receive(engine, 1, listEvents("r1"), now: 1)
        receive(engine, 1, listEvents("r2"), now: 1)
        receive(engine, 1, listEvents("r3"), now: 1)
        // A transport that kept reading past the pause: the bound refuses, saying why.
        XCTAssertTrue(jobs(receive(engine, 1, listEvents("r4"), now: 1)).isEmpty)
        let written = flush(engine, 1, now: 1)
        guard case .error(let ref, let e)? = written.frames.first.flatMap({ decode($0) }) else { return XCTFail("\(describe(written))") }
        XCTAssertEqual(ref, "r4")
        XCTAssertEqual(e.code, .rateLimited)
        XCTAssertTrue(e.message.contains("waiting for the database"), e.message)
        XCTAssertEqual(engine.connection(1)?.heldRequests, 2)
    }

    func testTheSendRateLimitStillRefusesAndNamesItself() {
        let engine = makeEngine { $0.sendBurst = 2; $0.sendRatePerSecond = 0.5 }
        ready(engine, 1)
        receive(engine, 1, sendJSON("a"), now: 1)
        receive(engine, 1, sendJSON("b"), now: 1)
        XCTAssertTrue(jobs(receive(engine, 1, sendJSON("c"), now: 1)).isEmpty)
        guard case .error(let ref, let e)? = flush(engine, 1, now: 1).frames.first.flatMap({ decode($0) }) else { return XCTFail() }
        XCTAssertEqual(ref, "c")
        XCTAssertEqual(e.code, .rateLimited)
        XCTAssertTrue(e.message.contains("send rate limit"), e.message)
        XCTAssertTrue(e.message.contains("a burst of 2 messages, then 0.50 a second"), e.message)
        XCTAssertTrue(e.message.contains("send_rate_per_second"), e.message)
    }

    func testDrainingAnswersHeldRequestsUnavailableAndReadsAgain() {
        let engine = makeEngine { $0.maxInFlightPerConnection = 1 }
        ready(engine, 1)
        receive(engine, 1, listEvents("r1"), now: 1)
        receive(engine, 1, listEvents("r2"), now: 1)
        XCTAssertEqual(engine.connection(1)?.heldRequests, 1)
        let actions = engine.beginDrain(now: 2)
        XCTAssertEqual(resumes(actions), [1], "the peer's close must be read")
        XCTAssertEqual(engine.connection(1)?.heldRequests, 0)
        XCTAssertEqual(describe(flush(engine, 1, now: 2)), ["error unavailable ref r2"])
        XCTAssertTrue(jobs(answerEvents(engine, "r1", now: 2)).isEmpty, "nothing held runs after the drain began")
        let written = flush(engine, 1, now: 2)
        XCTAssertEqual(describe(written), ["events ref r1"])
        XCTAssertEqual(written.close?.code, 1001)
    }
}
