import Foundation
import StaffcastCore
import XCTest

/// The storm path builds `subscribed` frames by joining pre-encoded messages; they must read
/// exactly like the frames `ServerFrame.encoded()` makes.
final class SubscribedFrameBuilderTests: XCTestCase {
    let event = EventSummary(id: UUID(), name: #"Gate "A" \ east"#, startsAt: nil, accessLevel: .staff)

    func message(_ seq: Int64, _ text: String) -> StaffMessage {
        StaffMessage(id: UUID(), seq: seq, eventID: event.id, senderID: UUID(), senderName: "Olivia", message: text,
                     messageType: .alert, priority: .urgent, sentAt: Date(timeIntervalSince1970: 1_700_000_000 + Double(seq)),
                     expiresAt: seq == 2 ? Date(timeIntervalSince1970: 1_800_000_000) : nil, read: false, readCount: Int(seq))
    }

    func testFramesDecodeLikeServerFrameWithEachSubscribersReadFlags() throws {
        let messages = [message(1, "one"), message(2, "two\nlines\t\u{1}"), message(3, "drei ü 🚨")]
        var builder = SubscribedFrameBuilder(messages: messages)
        let bytes = builder.frame(ref: #"r"1"#, event: event, history: [0, 1, 2], readIndices: [1], unreadCount: 2)
        guard case .subscribed(let ref, let summary, let history, let unread, _) = try ServerFrame.decode(bytes) else {
            return XCTFail("not a subscribed frame: \(String(decoding: bytes, as: UTF8.self))")
        }
        XCTAssertEqual(ref, #"r"1"#)
        XCTAssertEqual(summary.id, event.id)
        XCTAssertEqual(summary.name, event.name)
        XCTAssertEqual(summary.accessLevel, .staff)
        XCTAssertEqual(unread, 2)
        var expected = messages
        expected[1].read = true
        XCTAssertEqual(history, expected)
        // The same as the general encoder's frame, field by field.
        let reference = ServerFrame.subscribed(ref: #"r"1"#, event: event, history: expected, unreadCount: 2).encoded()
        XCTAssertEqual(try ServerFrame.decode(reference), try ServerFrame.decode(bytes))
    }

    func testEachSubscriberGetsOnlyItsHistoryAndNoRef() throws {
        var builder = SubscribedFrameBuilder(messages: [message(1, "a"), message(2, "b"), message(3, "c")])
        let first = builder.frame(ref: nil, event: event, history: [2], readIndices: [], unreadCount: 1)
        let second = builder.frame(ref: nil, event: event, history: [], readIndices: [], unreadCount: 0)
        guard case .subscribed(nil, _, let h1, 1, _) = try ServerFrame.decode(first),
              case .subscribed(nil, _, let h2, 0, _) = try ServerFrame.decode(second) else { return XCTFail() }
        XCTAssertEqual(h1.map(\.seq), [3])
        XCTAssertEqual(h2, [])
        XCTAssertFalse(String(decoding: first, as: UTF8.self).contains(#""ref""#))
    }
}
