import Foundation
import StaffcastCore
import XCTest

/// A subscribe in the upgrade's URL (`/v1/ws?subscribe=…`): it runs as the connection opens, and
/// `hello` waits for its answer so that both leave in one write, for at most `urlSubscribeHold`.
final class FanoutEngineURLSubscribeTests: FanoutEngineTestCase {
    func openSubscribing(_ engine: Engine, _ id: Int, sinceSeq: Int64? = nil, ref: String? = "u", now: Double = 0) -> [EngineAction] {
        engine.connectionOpened(id, identity: alice, token: nil, peer: "10.0.0.\(id)",
                                subscribe: URLSubscribe(eventID: event, sinceSeq: sinceSeq, ref: ref), now: now, wall: wall(now))
    }

    func testHelloWaitsForTheAnswerAndBothLeaveInOneWrite() {
        let engine = makeEngine(publishedThrough: 10)
        let opened = openSubscribing(engine, 1, sinceSeq: 7)
        XCTAssertEqual(wants(opened), [], "nothing is written before the subscribe is answered")
        let runs = jobs(opened)
        guard runs.count == 1, case .subscribe(let e, let since, let generation) = runs[0].request else {
            return XCTFail("expected the subscribe to run at once: \(opened)")
        }
        XCTAssertEqual(e, event)
        XCTAssertEqual(since, 7)
        XCTAssertEqual(runs[0].ref, "u")
        XCTAssertEqual(engine.connection(1)?.queuedFrames, 1, "hello waits in the queue")

        let answered = answerSubscribe(engine, 1, event, generation, ref: "u", historyThrough: 10, now: 0.01)
        XCTAssertEqual(wants(answered), [1])
        XCTAssertEqual(engine.writable(1, now: 0.01).frameCount, 2, "hello and subscribed in one write step")
        XCTAssertTrue(engine.hub.isSubscribed(1, to: event))
        _ = commit(engine, [message(11, event)], now: 1)
        XCTAssertEqual(describe(flush(engine, 1, now: 1)), ["message 11"])
    }

    func testARefusedSubscribeComesWithHelloAsAnErrorCarryingTheRef() {
        let engine = makeEngine()
        let opened = openSubscribing(engine, 1)
        guard let job = jobs(opened).first else { return XCTFail("\(opened)") }
        let answered = engine.jobCompleted(connection: 1, ref: job.ref, outcome: .failed(.noSuchEvent(event)), now: 0.01, wall: wall(0.01))
        XCTAssertEqual(wants(answered), [1])
        XCTAssertEqual(describe(flush(engine, 1, now: 0.01)), ["hello", "error not_found ref u"])
        XCTAssertFalse(engine.hub.isSubscribed(1, to: event))
    }

    func testASlowDatabaseHoldsHelloNoLongerThanTheHold() {
        let engine = makeEngine { $0.urlSubscribeHold = 1 }
        let opened = openSubscribing(engine, 1)
        guard let job = jobs(opened).first, case .subscribe(_, _, let generation) = job.request else { return XCTFail("\(opened)") }
        XCTAssertEqual(wants(engine.tick(now: 0.5, wall: wall(0.5))), [], "still within the hold")
        XCTAssertEqual(wants(engine.tick(now: 1.0, wall: wall(1.0))), [1], "the hold ran out: hello goes alone")
        XCTAssertEqual(describe(flush(engine, 1, now: 1)), ["hello"])
        XCTAssertEqual(wants(answerSubscribe(engine, 1, event, generation, ref: "u", historyThrough: 0, now: 3)), [1])
        XCTAssertEqual(describe(flush(engine, 1, now: 3)), ["subscribed ref u"])
    }

    func testWithoutASubscribeInTheURLHelloGoesAtOnce() {
        let engine = makeEngine()
        XCTAssertEqual(wants(open(engine, 1)), [1])
        XCTAssertEqual(describe(flush(engine, 1)), ["hello"])
    }

    func testADrainingServerClosesInsteadOfSubscribing() {
        let engine = makeEngine()
        _ = engine.beginDrain(now: 0)
        let opened = openSubscribing(engine, 1)
        XCTAssertEqual(jobs(opened).count, 0)
        XCTAssertEqual(wants(opened), [1])
        XCTAssertEqual(flush(engine, 1).close?.code, 1001)
    }
}

extension WriteStep {
    /// Frames in this step (0 for anything but frames).
    var frameCount: Int {
        if case .frames(let frames, _) = self { return frames.count }
        return 0
    }
}
