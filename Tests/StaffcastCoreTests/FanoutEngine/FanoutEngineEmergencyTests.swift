import Foundation
import StaffcastCore
import XCTest

/// Who gets `receipt` and `reminder` frames (the audience rules of docs/protocol.md,
/// Emergencies), in the engine alone: receipts only to admins and owners subscribed to the
/// event, following level changes and revokes; reminders only to the named users' connections
/// subscribed to the message's event.
final class FanoutEngineEmergencyTests: FanoutEngineTestCase {
    /// Like `ready`, with the user's level on each event as the subscribe's snapshot saw it.
    func readyAs(_ engine: Engine, _ id: Int, _ who: Identity, level: AccessLevel, events: [UUID],
                 file: StaticString = #filePath, line: UInt = #line) {
        _ = open(engine, id, who)
        _ = flush(engine, id)
        for e in events {
            guard let pending = requestSubscribe(engine, id, e, ref: "r", file: file, line: line) else { return }
            _ = engine.jobCompleted(connection: id, ref: "r",
                                    outcome: .subscribed(eventID: e, generation: pending.generation, reply: subscribedFrame(e, ref: "r"),
                                                         historyThrough: engine.hub.publishedThrough, accessThrough: 0,
                                                         changesThrough: engine.hub.changedThrough, level: level),
                                    now: 0, wall: wall(0))
            XCTAssertEqual(ops(flush(engine, id)), ["subscribed"], file: file, line: line)
        }
    }

    func receipt(_ event: UUID, reader: Identity) -> CommittedBatch<TestFrame>.Receipt {
        .init(eventID: event, frame: TestFrame(text: ServerFrame.receipt(ReadReceipt(
            messageID: UUID(), eventID: event, userID: reader.userID, displayName: reader.displayName, readCount: 1)).encoded()))
    }

    func reminder(_ event: UUID, to users: [Identity], round: Int = 1) -> CommittedBatch<TestFrame>.Reminder {
        let m = StaffMessage(id: UUID(), seq: 1, eventID: event, senderID: bob.userID, senderName: "Bob", message: "Evacuate",
                             messageType: .emergency, priority: .urgent, sentAt: wall0, expiresAt: nil, read: false, readCount: 0,
                             escalateAfterMinutes: 5)
        return .init(eventID: event, users: users.map(\.userID),
                     frame: TestFrame(text: ServerFrame.reminder(message: m, round: round).encoded()))
    }

    func testReceiptsGoOnlyToAdminsAndOwnersSubscribedToTheEvent() {
        let engine = makeEngine()
        readyAs(engine, 1, alice, level: .admin, events: [event])
        readyAs(engine, 2, bob, level: .staff, events: [event])
        readyAs(engine, 3, carol, level: .owner, events: [event])
        readyAs(engine, 4, carol, level: .owner, events: [other]) // an owner elsewhere only
        ready(engine, 5, alice) // connected, subscribed to nothing
        XCTAssertEqual(engine.receiptAudience(of: event), [1, 3])
        _ = engine.committed(CommittedBatch(receipts: [receipt(event, reader: bob)]), now: 0, wall: wall(0))
        XCTAssertEqual(ops(flush(engine, 1)), ["receipt"])
        XCTAssertEqual(ops(flush(engine, 3)), ["receipt"])
        for id in [2, 4, 5] { XCTAssertEqual(ops(flush(engine, id)), [], "connection \(id)") }
    }

    func testReceiptsFollowLevelChangesUnsubscribesAndRevokes() {
        let engine = makeEngine()
        readyAs(engine, 1, alice, level: .admin, events: [event])
        readyAs(engine, 2, bob, level: .staff, events: [event])
        // Alice becomes staff, Bob admin: the rule follows at once.
        let changes = CommittedBatch<TestFrame>(access: [
            .init(seq: 1, eventID: event, userID: alice.userID, level: .staff, revokedFrame: nil),
            .init(seq: 2, eventID: event, userID: bob.userID, level: .admin, revokedFrame: nil),
        ])
        _ = engine.committed(changes, now: 0, wall: wall(0))
        XCTAssertEqual(engine.receiptAudience(of: event), [2])
        // Unsubscribed: none; revoked: none.
        receive(engine, 2, #"{"op":"unsubscribe","event_id":"\#(idString(event))"}"#)
        _ = flush(engine, 2)
        XCTAssertEqual(engine.receiptAudience(of: event), [])
        readyAs(engine, 3, carol, level: .owner, events: [event])
        XCTAssertEqual(engine.receiptAudience(of: event), [3])
        _ = engine.committed(CommittedBatch(access: [revoke(carol, from: event, seq: 3)]), now: 0, wall: wall(0))
        XCTAssertEqual(ops(flush(engine, 3)), ["access_revoked"])
        XCTAssertEqual(engine.receiptAudience(of: event), [])
        _ = engine.committed(CommittedBatch(receipts: [receipt(event, reader: bob)]), now: 0, wall: wall(0))
        for id in [1, 2, 3] { XCTAssertEqual(ops(flush(engine, id)), [], "connection \(id)") }
    }

    func testRemindersGoOnlyToTheNamedUsersSubscribedToTheEvent() {
        let engine = makeEngine()
        readyAs(engine, 1, alice, level: .staff, events: [event])
        readyAs(engine, 2, alice, level: .staff, events: [other]) // Alice on another event's screen
        readyAs(engine, 3, bob, level: .staff, events: [event])   // Bob read it: not named
        readyAs(engine, 4, carol, level: .admin, events: [event])
        XCTAssertEqual(engine.reminderAudience(users: [alice.userID, carol.userID], event: event), [1, 4])
        _ = engine.committed(CommittedBatch(reminders: [reminder(event, to: [alice, carol], round: 2)]), now: 0, wall: wall(0))
        let written = flush(engine, 1)
        XCTAssertEqual(ops(written), ["reminder"])
        if case .reminder(let m, let round)? = decode(written.frames[0]) {
            XCTAssertEqual(round, 2)
            XCTAssertEqual(m.messageType, .emergency)
            XCTAssertEqual(m.escalateAfterMinutes, 5)
        } else {
            XCTFail("not a reminder")
        }
        XCTAssertEqual(ops(flush(engine, 4)), ["reminder"])
        XCTAssertEqual(ops(flush(engine, 2)), [])
        XCTAssertEqual(ops(flush(engine, 3)), [])
    }

    /// What someone read reaches every connection of theirs on that event's screen (their other
    /// devices stop counting and ringing), and nobody else's.
    func testMarkedReadGoesToTheReadersConnectionsSubscribedToTheEvent() {
        let engine = makeEngine()
        readyAs(engine, 1, alice, level: .staff, events: [event]) // the phone that read it
        readyAs(engine, 2, alice, level: .staff, events: [event]) // her terminal
        readyAs(engine, 3, alice, level: .staff, events: [other]) // a screen on another event
        readyAs(engine, 4, bob, level: .staff, events: [event])
        readyAs(engine, 5, carol, level: .owner, events: [event])
        let read = [UUID(), UUID()]
        let frame = TestFrame(text: ServerFrame.markedRead(eventID: event, messageIDs: read).encoded())
        _ = engine.committed(CommittedBatch(markedRead: [.init(userID: alice.userID, eventID: event, frame: frame)]), now: 0, wall: wall(0))
        for id in [1, 2] {
            let written = flush(engine, id)
            XCTAssertEqual(ops(written), ["marked_read"], "connection \(id)")
            XCTAssertEqual(decode(written.frames[0]), .markedRead(eventID: event, messageIDs: read))
        }
        for id in [3, 4, 5] { XCTAssertEqual(ops(flush(engine, id)), [], "connection \(id)") }
    }
}
