import Foundation
import StaffcastCore
import XCTest

/// A connection opened, its queue written in batches as the socket allows, and forgotten when it closes.
final class FanoutEngineConnectionTests: FanoutEngineTestCase {
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
