import Foundation
import StaffcastCore
import XCTest

/// Draining for a shutdown: queues and answers flushed, then 1001; new requests and connections refused.
final class FanoutEngineDrainTests: FanoutEngineTestCase {
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
}
