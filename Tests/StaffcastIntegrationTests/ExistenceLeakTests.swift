import Foundation
import StaffcastClient
import StaffcastCore
import XCTest

/// Responses do not reveal whether an event, user or message one cannot see exists: for each
/// route and op, asking about one that exists but is not yours gets the same status, code and
/// bytes as asking about one that does not exist.
final class ExistenceLeakTests: IntegrationTestCase {
    var message: StaffMessage!
    /// An event the outsider has no access to, and one that does not exist.
    var hidden: String { fixture.event.uuidString.lowercased() }
    let missing = UUID().uuidString.lowercased()

    override class var startsServer: Bool { true }

    override func setUpWithError() throws {
        try super.setUpWithError()
        message = try fixture.store.send(as: fixture.owner, SendRequest(eventID: fixture.event, message: "hello"))
    }

    func assertSame(_ method: String, _ existing: String, _ nonexistent: String, token: String, query: [String: String] = [:],
                    body: Data? = nil, contentType: String? = nil, status: Int,
                    file: StaticString = #filePath, line: UInt = #line) throws {
        let a = try server.api(token).raw(method, existing, query: query, body: body, contentType: contentType)
        let b = try server.api(token).raw(method, nonexistent, query: query, body: body, contentType: contentType)
        XCTAssertEqual(a.status, status, "\(method) \(existing): \(String(decoding: a.body, as: UTF8.self))", file: file, line: line)
        XCTAssertEqual(a.status, b.status, "\(method) \(existing)", file: file, line: line)
        XCTAssertEqual(String(decoding: a.body, as: UTF8.self), String(decoding: b.body, as: UTF8.self),
                       "\(method) \(existing): bodies differ", file: file, line: line)
    }

    func testEveryHTTPRouteAnswersAHiddenThingAsAMissingOne() throws {
        let outsider = fixture.outsiderToken
        let text = Data("hi".utf8)
        try assertSame("GET", "/v1/events/\(hidden)/messages", "/v1/events/\(missing)/messages", token: outsider, status: 404)
        try assertSame("GET", "/v1/events/\(hidden)/messages", "/v1/events/\(missing)/messages", token: outsider,
                       query: ["since_seq": "0"], status: 404)
        try assertSame("POST", "/v1/events/\(hidden)/messages", "/v1/events/\(missing)/messages", token: outsider,
                       body: text, contentType: "text/plain", status: 404)
        try assertSame("GET", "/v1/events/\(hidden)/status", "/v1/events/\(missing)/status", token: outsider, status: 404)
        try assertSame("GET", "/v1/messages/\(message.id.uuidString.lowercased())/receipts", "/v1/messages/\(missing)/receipts",
                       token: outsider, status: 404)
        // Users: notifying one who shares no event with you, and listing their tokens.
        let note = try JSONSerialization.data(withJSONObject: ["type": "t", "title": "t", "message": "m"])
        try assertSame("POST", "/v1/users/\(fixture.outsider.uuidString.lowercased())/notifications",
                       "/v1/users/\(missing)/notifications", token: fixture.adminToken, body: note,
                       contentType: "application/json", status: 403)
        try assertSame("GET", "/v1/users/\(fixture.outsider.uuidString.lowercased())/tokens", "/v1/users/\(missing)/tokens",
                       token: fixture.ownerToken, status: 404)
        try assertSame("DELETE", "/v1/users/\(fixture.staff.uuidString.lowercased())/tokens", "/v1/users/\(missing)/tokens",
                       token: outsider, status: 404)
        XCTAssertEqual(fixture.messageCount, 1, "nothing stored")
        XCTAssertEqual(try fixture.count("SELECT count(*) FROM notifications"), 0)
        XCTAssertEqual(try fixture.count("SELECT count(*) FROM api_tokens WHERE revoked_at IS NOT NULL"), 0)
    }

    func testEveryWebSocketOpAnswersAHiddenThingAsAMissingOne() throws {
        let outsider = try server.connect(fixture.outsiderToken)
        let requests: [(String, [String: Any], [String: Any])] = [
            ("subscribe", ["op": "subscribe", "event_id": hidden], ["op": "subscribe", "event_id": missing]),
            ("subscribe since", ["op": "subscribe", "event_id": hidden, "since_seq": 0],
             ["op": "subscribe", "event_id": missing, "since_seq": 0]),
            ("history", ["op": "history", "event_id": hidden], ["op": "history", "event_id": missing]),
            ("history after", ["op": "history", "event_id": hidden, "after_seq": 0],
             ["op": "history", "event_id": missing, "after_seq": 0]),
            ("send", ["op": "send", "event_id": hidden, "message": "hi"], ["op": "send", "event_id": missing, "message": "hi"]),
            ("mark_read", ["op": "mark_read", "message_id": message.id.uuidString.lowercased()], ["op": "mark_read", "message_id": missing]),
        ]
        for (name, existing, nonexistent) in requests {
            let a = try outsider.expectError(existing)
            let b = try outsider.expectError(nonexistent)
            XCTAssertEqual(a.code, .notFound, "\(name): \(a)")
            XCTAssertEqual(a, b, "\(name): the answers differ")
        }
        // A notification of someone else's is answered like one that does not exist.
        _ = try fixture.store.createNotification(as: fixture.admin, NotificationRequest(userID: fixture.staff, type: "t", title: "t", message: "m", data: nil))
        let theirs = try fixture.store.notifications(as: fixture.staff, unreadOnly: false).first?.id.uuidString.lowercased() ?? ""
        let a = try outsider.expectError(["op": "mark_notification_read", "notification_id": theirs])
        let b = try outsider.expectError(["op": "mark_notification_read", "notification_id": missing])
        XCTAssertEqual(a.code, .notFound)
        XCTAssertEqual(a, b, "mark_notification_read: the answers differ")
        XCTAssertEqual(fixture.messageCount, 1)
        XCTAssertEqual(try fixture.count("SELECT count(*) FROM message_reads"), 0)
    }
}
