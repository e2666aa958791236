import Foundation
@testable import StaffcastCore
import XCTest

/// The engine's side of audiences: a message to teams reaches its audience's subscribed
/// connections only (found through each user's connections, not by walking the event's
/// subscribers), in live fan-out and in the catch-up replayed after a late subscribe; a message
/// to the whole event still reaches everyone.
final class FanoutEngineAudienceTests: FanoutEngineTestCase {
    func seqOf(_ frame: TestFrame) -> Int64? {
        if case .message(let m)? = decode(frame) { return m.seq }
        return nil
    }

    func targeted(_ seq: Int64, _ event: UUID, audience: Set<UUID>) -> CommittedBatch<TestFrame>.Message {
        var m = message(seq, event)
        m.audience = audience
        return m
    }

    func testATeamMessageReachesItsAudienceOnly() {
        let engine = makeEngine()
        ready(engine, 1, alice, events: [event])
        ready(engine, 2, bob, events: [event])
        ready(engine, 3, carol, events: [event])
        ready(engine, 4, alice, events: [other]) // Alice's other connection, on another event
        ready(engine, 5, alice)                  // and one subscribed to nothing
        let actions = commit(engine, [targeted(1, event, audience: [alice.userID, bob.userID]), message(2, event)], now: 1)
        XCTAssertEqual(wants(actions).sorted(), [1, 2, 3])
        XCTAssertEqual(ops(flush(engine, 1, now: 1)), ["message", "message"])
        XCTAssertEqual(ops(flush(engine, 2, now: 1)), ["message", "message"])
        let carols = flush(engine, 3, now: 1)
        XCTAssertEqual(describe(carols).count, 1, "Carol gets only the message to everyone")
        XCTAssertEqual(seqOf(carols.frames[0]), 2)
        for id in [4, 5] { XCTAssertTrue(isIdle(engine.writable(id, now: 1)), "connection \(id)") }
    }

    func testAnAudienceWithNobodySubscribedCostsNothingAndTheCatchUpFiltersToo() {
        let engine = makeEngine()
        ready(engine, 1, alice, events: [event])
        XCTAssertEqual(wants(commit(engine, [targeted(1, event, audience: [UUID()])], now: 1)), [])
        // Carol and Bob subscribe from a snapshot older than seq 3: the replayed window gives
        // Bob the team message and Carol only the message to everyone.
        _ = commit(engine, [targeted(2, event, audience: [bob.userID]), message(3, event)], now: 1)
        _ = flush(engine, 1, now: 1)
        ready(engine, 2, bob)
        ready(engine, 3, carol)
        for (id, expected) in [(2, [2, 3] as [Int64]), (3, [3])] {
            guard let pending = requestSubscribe(engine, id, event, ref: "late", now: 2) else { return }
            _ = answerSubscribe(engine, id, event, pending.generation, ref: "late", historyThrough: 1, now: 2)
            let written = flush(engine, id, now: 2)
            XCTAssertEqual(ops(written).first, "subscribed")
            XCTAssertEqual(written.frames.dropFirst().compactMap { seqOf($0) }, expected, "connection \(id)")
        }
    }

    func testHubPublishesToTheAudienceThroughUsersConnections() {
        var hub = Hub<String>(publishedThrough: 0)
        let (u1, u2, u3) = (UUID(), UUID(), UUID())
        hub.connect(1, user: u1)
        hub.connect(2, user: u1)
        hub.connect(3, user: u2)
        hub.connect(4, user: u3)
        let now = Date()
        for id in [1, 3, 4] { _ = hub.subscribe(id, to: event, historyThrough: 0, changesThrough: 0, now: now) }
        XCTAssertEqual(hub.publish(seq: 1, eventID: event, expiresAt: nil, frame: "t", audience: [u1, u2]), [1, 3],
                       "connection 2 of u1 is not subscribed; u3 is not in the audience")
        XCTAssertEqual(hub.publish(seq: 2, eventID: event, expiresAt: nil, frame: "all").sorted(), [1, 3, 4])
        XCTAssertEqual(hub.publish(seq: 3, eventID: event, expiresAt: nil, frame: "none", audience: []), [])
    }
}
