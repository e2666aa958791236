import Foundation
import StaffcastCore
import XCTest

/// A `read` reply's count is from a snapshot; what the client holds beyond the snapshot's
/// seq is added (`CountedUnread`).
final class CountedUnreadTests: XCTestCase {
    let me = UUID(), other = UUID(), event = UUID()
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    func message(_ seq: Int64, from sender: UUID? = nil, read: Bool = false, expiresAt: Date? = nil) -> StaffMessage {
        StaffMessage(id: UUID(), seq: seq, eventID: event, senderID: sender ?? other, senderName: "Ops", message: "m\(seq)",
                     messageType: .broadcast, priority: .normal, sentAt: now, expiresAt: expiresAt, read: read, readCount: 0)
    }

    func testAMessageCommittedAfterTheSnapshotIsAddedToTheReplysCount() {
        // Seq 5 was read (the reply's own mark); 6 arrived live before the reply, whose
        // snapshot ended at 5: the reply says 0, one is unread.
        let held = [message(4, read: true), message(5, read: true), message(6)]
        XCTAssertEqual(CountedUnread.count(reply: 0, countedThroughSeq: 5, held: held, user: me, now: now), 1)
        // Seen by the snapshot: counted there, not twice.
        XCTAssertEqual(CountedUnread.count(reply: 1, countedThroughSeq: 6, held: held, user: me, now: now), 1)
    }

    func testOwnReadAndExpiredMessagesBeyondTheSnapshotAreNotAdded() {
        let held = [message(7, from: me), message(8, read: true), message(9, expiresAt: now.addingTimeInterval(-1)),
                    message(10, expiresAt: now.addingTimeInterval(60)), message(11)]
        XCTAssertEqual(CountedUnread.count(reply: 2, countedThroughSeq: 6, held: held, user: me, now: now), 4)
    }

    func testWithoutTheFieldTheReplysCountStands() {
        XCTAssertEqual(CountedUnread.count(reply: 3, countedThroughSeq: nil, held: [message(99)], user: me, now: now), 3)
    }

    func testALiveMessageTheSnapshotSawIsNotCountedAgain() {
        XCTAssertTrue(CountedUnread.liveIsUncounted(seq: 12, countedThroughSeq: nil))
        XCTAssertTrue(CountedUnread.liveIsUncounted(seq: 12, countedThroughSeq: 11))
        XCTAssertFalse(CountedUnread.liveIsUncounted(seq: 12, countedThroughSeq: 12))
    }
}
