import Foundation
import StaffcastCore
import XCTest

final class ServerFrameTests: XCTestCase {
    let message = StaffMessage(id: UUID(), seq: 7, eventID: UUID(), senderID: UUID(), senderName: "Olivia", message: "Gates open ✓ 門",
                               messageType: .alert, priority: .urgent, sentAt: Date(timeIntervalSince1970: 1_800_000_000.125),
                               expiresAt: nil, read: false, readCount: 2)

    func json(_ frame: ServerFrame) throws -> [String: Any] {
        try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(frame.encoded())) as? [String: Any])
    }

    func testMessageHasEveryContractField() throws {
        let object = try json(.message(message))
        XCTAssertEqual(object["op"] as? String, "message")
        let m = try XCTUnwrap(object["message"] as? [String: Any])
        XCTAssertEqual(Set(m.keys), ["id", "seq", "event_id", "sender_id", "sender_name", "message", "message_type", "priority",
                                     "sent_at", "expires_at", "read", "read_count", "edited_at", "escalate_after_minutes", "teams", "poll", "answer"])
        XCTAssertTrue(m["expires_at"] is NSNull, "expires_at must be present as null")
        XCTAssertEqual(m["sent_at"] as? String, "2027-01-15T08:00:00.125Z")
        XCTAssertEqual(m["id"] as? String, message.id.uuidString.lowercased())
        XCTAssertEqual(m["message"] as? String, "Gates open ✓ 門")
    }

    func testRoundTripOfEveryFrame() throws {
        let e = UUID()
        let notification = StaffNotification(id: UUID(), userID: UUID(), type: "shift", title: "T", message: "M",
                                             data: .object(["a": .number(1), "b": .array([.string("x"), .bool(true), .null])]),
                                             read: false, readAt: nil, createdAt: Date(timeIntervalSince1970: 1_800_000_000))
        let frames: [ServerFrame] = [
            .hello(user: Identity(userID: e, displayName: "Sam"), serverTime: Date(timeIntervalSince1970: 1_800_000_000), node: "n1"),
            .subscribed(ref: "r", event: EventSummary(id: e, name: "Fest", startsAt: nil, accessLevel: .staff), history: [message], unreadCount: 3),
            .unsubscribed(ref: nil, eventID: e),
            .message(message),
            .sent(ref: "s", message: message),
            .read(ref: "m", messageID: message.id, eventID: e, unreadCount: 0),
            .readAll(ref: "all", eventID: e, throughSeq: 200, marked: 198, unreadCount: 2),
            .read(ref: "c", messageID: message.id, eventID: e, unreadCount: 1, countedThroughSeq: 41),
            .readAll(ref: "all", eventID: e, throughSeq: 200, marked: 198, unreadCount: 2, countedThroughSeq: 203),
            .history(ref: nil, eventID: e, messages: [message, message]),
            .notification(notification),
            .notificationRead(ref: "n", notificationID: notification.id),
            .accessRevoked(eventID: e),
            .events(ref: "e", events: [EventSummary(id: e, name: "Fest", startsAt: Date(timeIntervalSince1970: 1_800_000_000), accessLevel: .owner)]),
            .pong(ref: "p"),
            .error(ref: "x", StaffcastError(.forbidden, "No.")),
        ]
        for frame in frames {
            XCTAssertEqual(try ServerFrame.decode(frame.encoded()), frame, frame.op)
        }
    }

    func testErrorFrameShape() throws {
        let object = try json(.error(ref: "r9", StaffcastError(.tooLarge, "Too big.")))
        XCTAssertEqual(object["op"] as? String, "error")
        XCTAssertEqual(object["ref"] as? String, "r9")
        XCTAssertEqual(object["code"] as? String, "too_large")
        XCTAssertEqual(object["message"] as? String, "Too big.")
    }

    func testErrorCodesMapToHTTPStatuses() {
        XCTAssertEqual(ErrorCode.all.map(\.httpStatus), [401, 403, 404, 400, 413, 429, 503, 500, 409, 410])
    }
}
