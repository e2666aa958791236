import Foundation
import StaffcastClient
import StaffcastCore
import XCTest

/// Keys 1-6 answer a poll in `staffcast watch` (docs/protocol.md, Polls); on other messages
/// they keep replying.
extension WatchStateTests {
    func poll(_ seq: Int64, _ options: [String], priority: Priority = .normal) -> StaffMessage {
        var m = message(seq, "Water at your gate?", priority: priority)
        m.poll = Poll(unchecked: options)
        return m
    }

    func testDigitKeysAnswerTheSelectedPoll() {
        var s = state()
        let q = poll(1, ["Yes", "No", "Low"])
        _ = s.live(q, now: t0)
        XCTAssertEqual(s.unreadCount, 1)
        XCTAssertEqual(s.key(.char("4")), [], "no option 4: nothing, and no reply either")
        XCTAssertEqual(s.key(.char("3")), [.answer(q.id, 2)])
        XCTAssertEqual(s.messages[0].answer, 2)
        XCTAssertTrue(s.messages[0].read, "answering marks read")
        XCTAssertEqual(s.unreadCount, 0)
        XCTAssertEqual(s.key(.char("1")), [.answer(q.id, 0)], "answering again changes it")
        // A message without a poll: 1 replies "on my way" as before.
        _ = s.live(message(2), now: t0)
        XCTAssertEqual(s.key(.char("1")), [.reply(s.messages[1].id, .onMyWay)])
    }

    func testAnUrgentSafetyCheckIsAcknowledgedByAnswering() {
        var s = state()
        let q = poll(1, Poll.safetyOptions, priority: .urgent)
        XCTAssertEqual(s.live(q, now: t0), [.bell])
        XCTAssertNotNil(s.alarm)
        XCTAssertEqual(s.key(.char("3")), [], "not an option: the alarm stays")
        XCTAssertNotNil(s.alarm)
        XCTAssertEqual(s.key(.char("2")), [.answer(q.id, 1)])
        XCTAssertNil(s.alarm)
        XCTAssertEqual(s.messages[0].answer, 1)
    }
}
