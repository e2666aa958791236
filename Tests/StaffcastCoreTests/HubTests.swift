import Foundation
import StaffcastCore
import XCTest

final class HubTests: XCTestCase {
    let event = UUID(), other = UUID(), alice = UUID(), bob = UUID()
    let now = Date()

    func subscribed(_ outcome: Hub<String>.SubscribeOutcome) -> [String]? {
        if case .subscribed(let catchUp) = outcome { return catchUp }
        return nil
    }

    func testPublishReachesOnlyThatEventsSubscribers() {
        var hub = Hub<String>(publishedThrough: 0)
        hub.connect(1, user: alice)
        hub.connect(2, user: bob)
        hub.connect(3, user: bob)
        XCTAssertEqual(subscribed(hub.subscribe(1, to: event, historyThrough: 0, changesThrough: 0, now: now)), [])
        XCTAssertEqual(subscribed(hub.subscribe(2, to: other, historyThrough: 0, changesThrough: 0, now: now)), [])
        XCTAssertEqual(hub.publish(seq: 1, eventID: event, expiresAt: nil, frame: "m1"), [1])
        XCTAssertEqual(hub.publish(seq: 2, eventID: other, expiresAt: nil, frame: "m2"), [2])
        XCTAssertEqual(hub.publish(seq: 2, eventID: other, expiresAt: nil, frame: "again"), [], "a seq is published once")
        XCTAssertEqual(hub.connections(ofUser: bob), [2, 3])
        XCTAssertEqual(hub.subscriberCounts, [event: 1, other: 1])
    }

    func testSnapshotAheadOfFanoutSkipsWhatHistoryHad() {
        var hub = Hub<String>(publishedThrough: 10)
        hub.connect(1, user: alice)
        XCTAssertEqual(subscribed(hub.subscribe(1, to: event, historyThrough: 12, changesThrough: 0, now: now)), [])
        XCTAssertEqual(hub.publish(seq: 11, eventID: event, expiresAt: nil, frame: "11"), [], "already in history")
        XCTAssertEqual(hub.publish(seq: 12, eventID: event, expiresAt: nil, frame: "12"), [])
        XCTAssertEqual(hub.publish(seq: 13, eventID: event, expiresAt: nil, frame: "13"), [1])
    }

    func testSnapshotBehindFanoutIsFilledFromTheRecentWindow() {
        var hub = Hub<String>(publishedThrough: 0)
        hub.connect(1, user: alice)
        _ = hub.publish(seq: 1, eventID: event, expiresAt: nil, frame: "1")
        _ = hub.publish(seq: 2, eventID: other, expiresAt: nil, frame: "2")
        _ = hub.publish(seq: 3, eventID: event, expiresAt: now.addingTimeInterval(-1), frame: "expired")
        _ = hub.publish(seq: 4, eventID: event, expiresAt: nil, frame: "4")
        XCTAssertEqual(subscribed(hub.subscribe(1, to: event, historyThrough: 1, changesThrough: 0, now: now)), ["4"])
        XCTAssertEqual(hub.publish(seq: 5, eventID: event, expiresAt: nil, frame: "5"), [1])
    }

    func testAWindowThatNoLongerCoversTheGapSaysLagged() {
        var hub = Hub<String>(publishedThrough: 0, recentCapacity: 2)
        hub.connect(1, user: alice)
        for seq in 1...5 { _ = hub.publish(seq: Int64(seq), eventID: event, expiresAt: nil, frame: "\(seq)") }
        guard case .lagged = hub.subscribe(1, to: event, historyThrough: 1, changesThrough: 0, now: now) else { return XCTFail() }
        XCTAssertFalse(hub.isSubscribed(1, to: event))
        XCTAssertEqual(subscribed(hub.subscribe(1, to: event, historyThrough: 3, changesThrough: 0, now: now)), ["4", "5"])
    }

    /// Edits and retracts handed on while a subscribe's snapshot was on its way come back with
    /// it, after its missed messages, only to their audience, once; a window that lost some
    /// says lagged, as for messages.
    func testChangesHandedOnAfterTheSnapshotAreReplayedAfterItsMessages() {
        var hub = Hub<String>(publishedThrough: 0, changedThrough: 5, recentCapacity: 3)
        hub.connect(1, user: alice)
        hub.connect(2, user: bob)
        _ = hub.publish(seq: 1, eventID: event, expiresAt: nil, frame: "m1")
        hub.recordChange(seq: 6, eventID: event, frame: "edit m1", audience: nil)
        hub.recordChange(seq: 7, eventID: other, frame: "other", audience: nil)
        hub.recordChange(seq: 8, eventID: event, frame: "team only", audience: [bob])
        hub.recordChange(seq: 8, eventID: event, frame: "again", audience: nil)
        XCTAssertEqual(hub.changedThrough, 8)
        XCTAssertEqual(subscribed(hub.subscribe(1, to: event, historyThrough: 0, changesThrough: 5, now: now)), ["m1", "edit m1"])
        XCTAssertEqual(subscribed(hub.subscribe(2, to: event, historyThrough: 1, changesThrough: 6, now: now)), ["team only"])
        XCTAssertEqual(subscribed(hub.subscribe(2, to: other, historyThrough: 1, changesThrough: 8, now: now)), [],
                       "a snapshot that saw every change gets none again")
        for seq in 9...11 { hub.recordChange(seq: Int64(seq), eventID: event, frame: "\(seq)", audience: nil) }
        hub.connect(3, user: alice)
        guard case .lagged = hub.subscribe(3, to: event, historyThrough: 1, changesThrough: 7, now: now) else { return XCTFail() }
        XCTAssertEqual(subscribed(hub.subscribe(3, to: event, historyThrough: 1, changesThrough: 8, now: now)), ["9", "10", "11"])
    }

    /// The flaky "retract counted twice": a snapshot that already saw a change (the listener
    /// was behind) must not get it again when the listener hands it on.
    func testAChangeTheSnapshotSawIsNotHandedOnAgain() {
        var hub = Hub<String>(publishedThrough: 0, changedThrough: 4)
        hub.connect(1, user: alice)
        hub.connect(2, user: bob)
        XCTAssertEqual(subscribed(hub.subscribe(1, to: event, historyThrough: 0, changesThrough: 6, now: now)), [])
        XCTAssertEqual(subscribed(hub.subscribe(2, to: event, historyThrough: 0, changesThrough: 4, now: now)), [])
        hub.recordChange(seq: 5, eventID: event, frame: "5", audience: nil)
        XCTAssertEqual(hub.subscribers(of: event, forChange: 5), [2], "1's snapshot carried change 5")
        XCTAssertEqual(hub.subscribers(of: event, forChange: 6), [2])
        XCTAssertEqual(hub.subscribers(of: event, forChange: 7).sorted(), [1, 2])
        XCTAssertEqual(hub.subscribers(of: event, forChange: nil).sorted(), [1, 2], "a reply has no change seq")
    }

    func testRevokeAndDisconnect() {
        var hub = Hub<String>(publishedThrough: 0)
        hub.connect(1, user: alice)
        hub.connect(2, user: alice)
        hub.connect(3, user: bob)
        for id in 1...3 { _ = hub.subscribe(id, to: event, historyThrough: 0, changesThrough: 0, now: now) }
        _ = hub.subscribe(1, to: other, historyThrough: 0, changesThrough: 0, now: now)
        XCTAssertEqual(hub.revoke(user: alice, from: event), [1, 2])
        XCTAssertEqual(hub.publish(seq: 1, eventID: event, expiresAt: nil, frame: "x"), [3])
        XCTAssertTrue(hub.isSubscribed(1, to: other))
        hub.disconnect(1)
        XCTAssertEqual(hub.publish(seq: 2, eventID: other, expiresAt: nil, frame: "y"), [])
        XCTAssertEqual(hub.connections(ofUser: alice), [2])
        XCTAssertEqual(hub.connectionCount, 2)
        XCTAssertFalse(hub.unsubscribe(3, from: other))
        XCTAssertTrue(hub.unsubscribe(3, from: event))
        XCTAssertEqual(hub.subscriberCount(of: event), 0)
    }
}

final class OutboundQueueTests: XCTestCase {
    func testBoundedByFramesAndBytes() {
        var q = OutboundQueue<Int>(maxFrames: 3, maxBytes: 100)
        XCTAssertTrue(q.push(1, bytes: 40))
        XCTAssertTrue(q.push(2, bytes: 40))
        XCTAssertFalse(q.push(3, bytes: 40), "over the byte bound")
        XCTAssertTrue(q.push(3, bytes: 20))
        XCTAssertFalse(q.push(4, bytes: 1), "over the frame bound")
        XCTAssertEqual(q.popFirst(), 1)
        XCTAssertEqual(q.bytes, 60)
        XCTAssertTrue(q.push(4, bytes: 1))
        XCTAssertEqual([q.popFirst(), q.popFirst(), q.popFirst(), q.popFirst()], [2, 3, 4, nil])
        XCTAssertTrue(q.isEmpty)
        XCTAssertTrue(q.push(5, bytes: 500), "one frame larger than the byte bound still goes when the queue is empty")
    }

    func testManyPushesAndPopsKeepOrder() {
        var q = OutboundQueue<Int>(maxFrames: 10, maxBytes: 1_000)
        var out: [Int] = []
        for i in 0..<1_000 {
            XCTAssertTrue(q.push(i, bytes: 1))
            if i % 2 == 1 { out.append(q.popFirst()!); out.append(q.popFirst()!) }
        }
        XCTAssertEqual(out, Array(0..<1_000))
    }
}

final class TokenBucketTests: XCTestCase {
    func testBurstThenRate() {
        var b = TokenBucket(perSecond: 2, burst: 3, now: 0)
        XCTAssertEqual((0..<4).map { _ in b.take(now: 0) }, [true, true, true, false])
        XCTAssertFalse(b.take(now: 0.4))
        XCTAssertTrue(b.take(now: 0.5))
        XCTAssertTrue(b.take(now: 100))
        XCTAssertTrue(b.take(now: 100))
        XCTAssertTrue(b.take(now: 100))
        XCTAssertFalse(b.take(now: 100), "refill is capped at the burst")
    }
}
