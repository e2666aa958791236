import Foundation
@testable import StaffcastCore
import XCTest

/// The engine's side of the toolbox: edits and retracts (event frames) reach every subscriber
/// of their event and nobody else, after the batch's messages; `edit`/`retract` become jobs.
final class FanoutEngineToolboxTests: FanoutEngineTestCase {
    func testEditAndRetractFramesReachTheEventsSubscribersOnly() {
        let engine = makeEngine()
        ready(engine, 1, alice, events: [event])
        ready(engine, 2, bob, events: [event])
        ready(engine, 3, carol, events: [other])
        ready(engine, 4, carol)
        let m = message(1, event)
        let retracted = TestFrame(text: ServerFrame.messageRetracted(ref: nil, messageID: UUID(), eventID: event).encoded())
        let actions = engine.committed(CommittedBatch(messages: [m], eventFrames: [.init(eventID: event, frame: retracted)]),
                                       now: 1, wall: wall(1))
        XCTAssertEqual(wants(actions).sorted(), [1, 2])
        for id in [1, 2] {
            let written = flush(engine, id, now: 1)
            XCTAssertEqual(ops(written), ["message", "message_retracted"], "the message first, then its change")
            XCTAssertTrue(written.frames.last === retracted, "one encoded frame for everyone")
        }
        for id in [3, 4] { XCTAssertTrue(isIdle(engine.writable(id, now: 1)), "connection \(id)") }
    }

    /// A retract fanned out while a subscribe's snapshot (which did not see it) was on its way
    /// reaches that subscriber too, after `subscribed`: a reconnecting phone kept ringing for a
    /// retracted false alarm. Replies (no change seq) are not replayed.
    func testAChangeHandedOnBeforeASubscribeIsLinedUpIsReplayedToIt() {
        let engine = makeEngine()
        ready(engine, 2, bob, events: [event])
        ready(engine, 1, alice)
        guard let generation = requestSubscribe(engine, 1, event, ref: "s", now: 1)?.generation else { return }
        let retracted = TestFrame(text: ServerFrame.messageRetracted(ref: nil, messageID: UUID(), eventID: event).encoded())
        let reply = TestFrame(text: ServerFrame.reply(Reply(messageID: UUID(), eventID: event, userID: bob.userID, displayName: "Bob",
                                                            status: .done, text: nil, repliedAt: wall0)).encoded())
        let batch = CommittedBatch<TestFrame>(eventFrames: [.init(eventID: event, frame: retracted, changeSeq: 4),
                                                            .init(eventID: event, frame: reply)])
        XCTAssertEqual(wants(engine.committed(batch, now: 1, wall: wall(1))), [2], "not to the connection still waiting")
        _ = flush(engine, 2, now: 1)

        _ = answerSubscribe(engine, 1, event, generation, ref: "s", historyThrough: 0, changesThrough: 3, now: 2)
        let written = flush(engine, 1, now: 2)
        XCTAssertEqual(ops(written), ["subscribed", "message_retracted"])
        XCTAssertTrue(written.frames.last === retracted)

        // A snapshot that saw the change gets nothing again; later changes come live, once.
        ready(engine, 3, carol)
        guard let again = requestSubscribe(engine, 3, event, ref: "t", now: 3)?.generation else { return }
        _ = answerSubscribe(engine, 3, event, again, ref: "t", historyThrough: 0, changesThrough: 4, now: 3)
        XCTAssertEqual(ops(flush(engine, 3, now: 3)), ["subscribed"])
        let edit = TestFrame(text: ServerFrame.messageRetracted(ref: nil, messageID: UUID(), eventID: event).encoded())
        XCTAssertEqual(wants(engine.committed(CommittedBatch(eventFrames: [.init(eventID: event, frame: edit, changeSeq: 5)]),
                                              now: 4, wall: wall(4))).sorted(), [1, 2, 3])
        for id in [1, 2, 3] { XCTAssertEqual(ops(flush(engine, id, now: 4)), ["message_retracted"]) }
    }

    func testEditAndRetractOpsBecomeJobs() {
        let engine = makeEngine()
        ready(engine, 1, alice)
        let id = UUID()
        let edit = jobs(receive(engine, 1, #"{"op":"edit","ref":"e","message_id":"\#(idString(id))","message":"Gate 4"}"#, now: 1))
        XCTAssertEqual(edit.map(\.request), [.client(.edit(messageID: id, message: "Gate 4"))])
        let retract = jobs(receive(engine, 1, #"{"op":"retract","message_id":"\#(idString(id))"}"#, now: 1))
        XCTAssertEqual(retract.map(\.request), [.client(.retract(messageID: id))])
        // An empty correction is refused before any job.
        let bad = receive(engine, 1, #"{"op":"edit","ref":"b","message_id":"\#(idString(id))","message":"  "}"#, now: 1)
        XCTAssertEqual(jobs(bad).count, 0)
        XCTAssertEqual(ops(flush(engine, 1, now: 1)), ["error"])
    }

    /// Replies go to the event's subscribers who are among its admins and owners (the batch's
    /// audience), on every connection they have, and to nobody else.
    func testRepliesReachOnlyTheSubscribedOrganisers() {
        let engine = makeEngine()
        ready(engine, 1, alice, events: [event]) // organiser
        ready(engine, 2, alice, events: [event]) // the same organiser, second device
        ready(engine, 3, bob, events: [event])   // staff
        ready(engine, 4, carol, events: [other]) // organiser of the event, subscribed elsewhere
        let r = Reply(messageID: UUID(), eventID: event, userID: bob.userID, displayName: "Bob", status: .runningLate,
                      text: nil, repliedAt: wall0)
        let frame = TestFrame(text: ServerFrame.reply(r).encoded())
        let batch = CommittedBatch<TestFrame>(eventFrames: [.init(eventID: event, frame: frame, audience: [alice.userID, carol.userID])])
        XCTAssertEqual(wants(engine.committed(batch, now: 1, wall: wall(1))).sorted(), [1, 2])
        for id in [1, 2] { XCTAssertTrue(flush(engine, id, now: 1).frames.first === frame) }
        for id in [3, 4] { XCTAssertTrue(isIdle(engine.writable(id, now: 1)), "connection \(id)") }
        XCTAssertTrue(CommittedBatch<TestFrame>.EventFrame(eventID: event, frame: frame).reaches(bob.userID), "no audience: everyone")
    }

    func testReplyOpBecomesAJob() {
        let engine = makeEngine()
        ready(engine, 1, bob)
        let id = UUID()
        let runs = jobs(receive(engine, 1, #"{"op":"reply","message_id":"\#(idString(id))","status":"done"}"#, now: 1))
        XCTAssertEqual(runs.map(\.request), [.client(.reply(try! ReplyRequest(messageID: id, status: "done", text: nil)))])
    }
}
