import Foundation
import StaffcastClient
import StaffcastCore
import XCTest

/// The terminal's unread count against replies counted in an older or newer database snapshot
/// than the live messages it holds (`counted_through_seq`, `CountedUnread`).
final class WatchStateUnreadTests: WatchStateTestCase {
    func testAMessageThatArrivedBeforeAnOlderSnapshotsReplyStaysCounted() {
        var s = state()
        _ = s.live(message(5), now: t0)
        _ = s.live(message(6), now: t0) // committed after the snapshot of the reply to 5's mark
        s.read(messageID: s.messages[0].id, eventID: event, unreadCount: 0, countedThroughSeq: 5, now: t0)
        XCTAssertEqual(s.unreadCount, 1, "6 is unread")
        s.read(messageID: s.messages[1].id, eventID: event, unreadCount: 0, countedThroughSeq: 6, now: t0)
        XCTAssertEqual(s.unreadCount, 0)
    }

    func testAMessageTheReplysSnapshotSawIsNotCountedAgainWhenItArrives() {
        var s = state()
        _ = s.live(message(5), now: t0)
        s.read(messageID: s.messages[0].id, eventID: event, unreadCount: 1, countedThroughSeq: 6, now: t0)
        _ = s.live(message(6), now: t0)
        XCTAssertEqual(s.unreadCount, 1)
        _ = s.live(message(7), now: t0)
        XCTAssertEqual(s.unreadCount, 2)
    }

    func testMarkAllReadAddsWhatItsSnapshotCouldNotSee() {
        var s = state()
        _ = s.live(message(5), now: t0)
        _ = s.live(message(6, "Evacuate", type: .emergency), now: t0)
        _ = s.live(message(7), now: t0)
        s.readAll(eventID: event, throughSeq: 5, marked: 1, unreadCount: 0, countedThroughSeq: 5, now: t0)
        XCTAssertEqual(s.unreadCount, 2)
    }

    /// Read on another device (`marked_read`): the emergency stops ringing here, the count
    /// drops once per message however often it is said, and the reply to a read made here
    /// still settles the count.
    func testAReadOnAnotherDeviceStopsTheAlarmAndCountsOnce() {
        var s = state()
        _ = s.live(message(5), now: t0)
        _ = s.live(message(6, "Evacuate", type: .emergency), now: t0)
        XCTAssertEqual(s.unreadCount, 2)
        XCTAssertEqual(s.alarm?.message.seq, 6)
        let evacuate = s.messages[1].id
        s.markedRead(eventID: event, messageIDs: [evacuate], now: t0)
        XCTAssertNil(s.alarm)
        XCTAssertEqual(s.unreadCount, 1)
        XCTAssertTrue(s.messages[1].read)
        s.markedRead(eventID: event, messageIDs: [evacuate, UUID()], now: t0) // again, and one not held
        XCTAssertEqual(s.unreadCount, 1)
        s.markedRead(eventID: UUID(), messageIDs: [s.messages[0].id], now: t0) // another event's
        XCTAssertEqual(s.unreadCount, 1)
        s.read(messageID: s.messages[0].id, eventID: event, unreadCount: 0, countedThroughSeq: 6, now: t0)
        XCTAssertEqual(s.unreadCount, 0)
    }

    func testWithoutTheFieldTheReplysCountStands() {
        var s = state()
        _ = s.live(message(5), now: t0)
        _ = s.live(message(6), now: t0)
        s.read(messageID: s.messages[0].id, eventID: event, unreadCount: 0)
        XCTAssertEqual(s.unreadCount, 0)
    }
}
