import Foundation
import StaffcastCore
import XCTest

/// Slow clients: a queue over its bounds closes the client with 4008; a reader that stops reading
/// is dropped, one that keeps making progress never.
final class FanoutEngineSlowClientTests: FanoutEngineTestCase {
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
}
