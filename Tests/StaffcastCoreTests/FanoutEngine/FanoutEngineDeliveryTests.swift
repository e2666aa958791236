import Foundation
import StaffcastCore
import XCTest

/// The fan-out of committed batches: messages, notifications and revoked access reach the right
/// connections; a revoked token closes its connections.
final class FanoutEngineDeliveryTests: FanoutEngineTestCase {
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

    /// A token that expired by the clock closes its connections the same way, and says so (it
    /// said "token revoked"; attack round).
    func testAnExpiredTokenClosesWith4401SayingItExpired() {
        let engine = makeEngine()
        ready(engine, 1, alice, token: tokenA, events: [event])
        ready(engine, 2, bob, token: tokenB, events: [event])
        let actions = engine.committed(CommittedBatch(revokedTokens: [tokenB], expiredTokens: [tokenA]), now: 10, wall: wall(10))
        XCTAssertEqual(notices(actions).count, 2)
        guard case .close(4401, let expired) = engine.writable(1, now: 10) else { return XCTFail("expected close 4401") }
        XCTAssertEqual(expired, "token expired")
        guard case .close(4401, let revoked) = engine.writable(2, now: 10) else { return XCTFail("expected close 4401") }
        XCTAssertEqual(revoked, "token revoked")
    }

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
}
