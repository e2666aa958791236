import Foundation
import StaffcastCore
import XCTest

/// Subscribing: the answer from a snapshot joined to the live fan-out without a gap or a duplicate,
/// and unsubscribes or revokes racing the database's answer.
final class FanoutEngineSubscribeTests: FanoutEngineTestCase {
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
}
