import Foundation
import StaffcastCore
import XCTest

/// Heartbeats: a silent connection is pinged, its pong timed, and closed then dropped when it stays silent.
final class FanoutEngineHeartbeatTests: FanoutEngineTestCase {
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
}
