import Foundation
import StaffcastClient
import StaffcastCore
import StaffcastPostgres
import XCTest

/// Staff replies (docs/protocol.md) through the WebSocket protocol and HTTP, with their access
/// rules, live to the event's subscribed admins and owners only, and in SQL under RLS.
final class RepliesTests: IntegrationTestCase {
    override class var startsServer: Bool { true }

    func send(_ text: String) throws -> StaffMessage {
        try fixture.store.send(as: fixture.owner, SendRequest(eventID: fixture.event, message: text))
    }

    func testAReplyIsAcknowledgedAndLiveToSubscribedOrganisersOnly() throws {
        let m = try send("Shift starts at 9 at gate 3")
        let owner = try server.subscriber(fixture.ownerToken, fixture.event)
        let admin = try server.subscriber(fixture.adminToken, fixture.event)
        let otherStaff = try fixture.store.createUser(name: "Sue Staff")
        try fixture.store.grant(event: fixture.event, user: otherStaff, level: .staff)
        let sue = try server.connect(fixture.staffToken) // another staff connection: gets no replies
        _ = try sue.subscribe(fixture.event)
        let staff = try server.subscriber(fixture.staffToken, fixture.event)

        try staff.send(["op": "reply", "ref": "r1", "message_id": m.id.uuidString, "status": "running_late", "text": "10 min"])
        guard case .replied(let ref, let mine) = try staff.expect("replied") else { return XCTFail() }
        XCTAssertEqual(ref, "r1")
        XCTAssertEqual(mine.status, .runningLate)
        XCTAssertEqual(mine.text, "10 min")
        XCTAssertEqual(mine.displayName, "Sam Staff")
        for organiser in [owner, admin] {
            guard case .reply(let live) = try organiser.expect("reply") else { return XCTFail() }
            XCTAssertEqual(live.messageID, m.id)
            XCTAssertEqual(live.userID, fixture.staff)
            XCTAssertEqual(live.status, .runningLate)
        }
        try sue.expectSilence(1)
        try staff.expectSilence(0.5)
    }

    func testHTTPListsEachPersonsLatestReplyForOrganisersOnly() throws {
        let m = try send("Gates open")
        let staff = try server.connect(fixture.staffToken)
        for (i, status) in ["on_my_way", "done"].enumerated() {
            try staff.send(["op": "reply", "ref": "r\(i)", "message_id": m.id.uuidString, "status": status])
            _ = try staff.expect("replied")
        }
        let admin = try server.connect(fixture.adminToken)
        try admin.send(["op": "reply", "message_id": m.id.uuidString, "status": "custom", "text": "I'll cover gate 2"])
        _ = try admin.expect("replied")
        let replies = try server.api(fixture.ownerToken).replies(m.id)
        XCTAssertEqual(replies.map(\.displayName), ["Adam Admin", "Sam Staff"])
        XCTAssertEqual(replies.map(\.status), [.custom, .done], "each person's latest")
        XCTAssertEqual(replies.first?.text, "I'll cover gate 2")
        let raw = try server.api(fixture.ownerToken).raw("GET", "/v1/messages/\(m.id.uuidString)/replies")
        let object = try JSONSerialization.jsonObject(with: raw.body) as? [String: Any]
        let first = (object?["replies"] as? [[String: Any]])?.first
        for key in ["message_id", "event_id", "user_id", "display_name", "status", "text", "replied_at"] {
            XCTAssertNotNil(first?[key], key)
        }
        // Receipts show each person's latest reply too.
        let receipts = try fixture.store.receipts(as: fixture.owner, message: m.id)
        XCTAssertEqual((receipts.readBy + receipts.unreadBy).first { $0.userID == fixture.staff }?.reply?.status, .done)
        let rawReceipts = try server.api(fixture.ownerToken).raw("GET", "/v1/messages/\(m.id.uuidString)/receipts")
        XCTAssertTrue(String(decoding: rawReceipts.body, as: UTF8.self).contains("\"status\":\"done\""))
        XCTAssertEqual(try server.api(fixture.staffToken).raw("GET", "/v1/messages/\(m.id.uuidString)/replies").status, 403)
        XCTAssertEqual(try server.api(fixture.outsiderToken).raw("GET", "/v1/messages/\(m.id.uuidString)/replies").status, 404)
    }

    /// Replies and poll answers share one bucket per user, over all of their connections and
    /// HTTP: past the burst, `rate_limited` naming the limit, nothing stored, nothing sent to
    /// organisers; another user is not affected.
    func testRepliesAndAnswersAreRateLimitedPerUserAcrossConnectionsAndHTTP() throws {
        server.stop()
        server = try TestServer(conninfo: fixture.conninfo) { $0.replyBurst = 3; $0.replyRatePerMinute = 0.1 }
        let m = try send("Shift starts at 9 at gate 3")
        let body = try JSONSerialization.data(withJSONObject: ["message": "Are you safe?", "poll": ["options": "safe"]])
        let created = try server.api(fixture.ownerToken).raw("POST", "/v1/events/\(fixture.event.uuidString.lowercased())/messages",
                                                            body: body, contentType: "application/json")
        XCTAssertEqual(created.status, 201, String(decoding: created.body, as: UTF8.self))
        let check = try JSONDecoder().decode(StaffMessage.self, from: created.body)
        let answerPath = "/v1/messages/\(check.id.uuidString.lowercased())/answers"
        let admin = try server.subscriber(fixture.adminToken, fixture.event)
        let first = try server.subscriber(fixture.staffToken, fixture.event)
        let second = try server.connect(fixture.staffToken)

        try first.send(["op": "reply", "message_id": m.id.uuidString, "status": "on_my_way"])
        _ = try first.expect("replied")
        try second.send(["op": "answer", "message_id": check.id.uuidString, "option": 1])
        _ = try second.expect("answered")
        XCTAssertEqual(try server.api(fixture.staffToken).raw("POST", answerPath, body: Data(#"{"option":0}"#.utf8),
                                                              contentType: "application/json").status, 201)
        // The burst of 3 is spent, whichever connection or call asks next.
        for (socket, frame) in [(second, ["op": "reply", "message_id": m.id.uuidString, "status": "done"] as [String: Any]),
                                (first, ["op": "answer", "message_id": check.id.uuidString, "option": 1])] {
            let e = try socket.expectError(frame)
            XCTAssertEqual(e.code, .rateLimited)
            XCTAssertTrue(e.message.contains("reply_burst") && e.message.contains("reply_rate_per_minute"), e.message)
        }
        let refused = try server.api(fixture.staffToken).raw("POST", answerPath, body: Data(#"{"option":1}"#.utf8),
                                                             contentType: "application/json")
        XCTAssertEqual(refused.status, 429)
        XCTAssertTrue(String(decoding: refused.body, as: UTF8.self).contains("rate_limited"))
        XCTAssertEqual(try fixture.count("SELECT count(*) FROM message_replies WHERE user_id = $1", [fixture.staff.uuidString]), 1)
        XCTAssertEqual(try fixture.count("SELECT count(*) FROM poll_answer_log WHERE user_id = $1", [fixture.staff.uuidString]), 2)
        XCTAssertEqual(try fixture.count("SELECT option FROM poll_answers WHERE user_id = $1", [fixture.staff.uuidString]), 0)
        // Another user has a bucket of their own.
        let other = try server.connect(fixture.adminToken)
        try other.send(["op": "reply", "message_id": m.id.uuidString, "status": "done"])
        _ = try other.expect("replied")
        // The organiser heard of the one reply that was stored (and of the admin's), no more.
        var staffReplies = 0
        while let frame = try admin.nextOrNil(timeout: 1.5) {
            if case .reply(let r) = frame, r.userID == fixture.staff { staffReplies += 1 }
        }
        XCTAssertEqual(staffReplies, 1)
    }

    func testBadRepliesAreRefusedClearly() throws {
        let m = try send("Gates open")
        let staff = try server.connect(fixture.staffToken)
        let id = m.id.uuidString
        XCTAssertEqual(try staff.expectError(["op": "reply", "message_id": id, "status": "maybe"]).code, .invalid)
        XCTAssertEqual(try staff.expectError(["op": "reply", "message_id": id, "status": "custom"]).code, .invalid)
        XCTAssertEqual(try staff.expectError(["op": "reply", "message_id": id, "status": "custom",
                                              "text": String(repeating: "é", count: 141)]).code, .tooLarge)
        XCTAssertEqual(try staff.expectError(["op": "reply", "message_id": id, "status": "custom", "text": "a\u{07}b"]).code, .invalid)
        XCTAssertEqual(try staff.expectError(["op": "reply", "message_id": UUID().uuidString, "status": "done"]).code, .notFound)
        let outsider = try server.connect(fixture.outsiderToken)
        XCTAssertEqual(try outsider.expectError(["op": "reply", "message_id": id, "status": "done"]).code, .notFound)
        // A retracted message takes no replies.
        _ = try fixture.store.retractMessage(as: fixture.owner, messageID: m.id)
        XCTAssertEqual(try staff.expectError(["op": "reply", "message_id": id, "status": "done"]).code, .notFound)
        XCTAssertEqual(try fixture.count("SELECT count(*) FROM message_replies"), 0)
    }

    /// An expired message takes no replies, as its poll takes no answers (`invalid`, saying so);
    /// it used to answer `replied` and tell the organisers live.
    func testAnExpiredMessageTakesNoReplies() throws {
        let organiser = try server.subscriber(fixture.adminToken, fixture.event) // not the sender: hears the message
        let m = try send("Gates open")
        _ = try organiser.expect("message")
        try fixture.expire(m.id)
        let refusal = try server.connect(fixture.staffToken).expectError(["op": "reply", "message_id": m.id.uuidString, "status": "done"])
        XCTAssertEqual(refusal.code, .invalid)
        XCTAssertTrue(refusal.message.contains("has expired"), refusal.message)
        XCTAssertEqual(try fixture.count("SELECT count(*) FROM message_replies"), 0)
        try organiser.expectSilence(0.3)
    }

    /// The rules directly in SQL, as the server acts for each user.
    func testRowLevelSecurityOfReplies() throws {
        let m = try send("Gates open")
        let conn = try PGConnection(conninfo: fixture.conninfo)
        func insert(_ user: UUID, as other: UUID? = nil, event: UUID? = nil) throws {
            _ = try conn.transaction(asUser: user) {
                try $0.query("INSERT INTO message_replies (message_id, event_id, user_id, status) VALUES ($1, $2, $3, 'done')",
                             [m.id.uuidString, (event ?? fixture.event).uuidString, (other ?? user).uuidString])
            }
        }
        func refused(_ body: () throws -> Void) {
            XCTAssertThrowsError(try body()) { XCTAssertEqual(($0 as? PostgresError)?.sqlState, "42501", "\($0)") }
        }
        try insert(fixture.staff)
        try insert(fixture.admin)
        refused { try insert(fixture.outsider) }
        refused { try insert(fixture.staff, as: fixture.admin) } // not in someone else's name
        let other = try fixture.store.createEvent(name: "Other", startsAt: nil)
        try fixture.store.grant(event: other, user: fixture.staff, level: .staff)
        refused { try insert(fixture.staff, event: other) } // not under another event
        func visible(_ user: UUID) throws -> Int {
            try conn.transaction(asUser: user) { try $0.query("SELECT count(*) FROM message_replies").int(0, 0) ?? -1 }
        }
        XCTAssertEqual(try visible(fixture.staff), 1, "staff see their own")
        XCTAssertEqual(try visible(fixture.owner), 2, "organisers see everyone's")
        XCTAssertEqual(try visible(fixture.outsider), 0)
    }
}
