import Foundation
import StaffcastClient
import StaffcastCore
import XCTest

/// Each route of the HTTP API (docs/protocol.md, HTTP API) against a real server.
final class HTTPAPITests: IntegrationTestCase {
    override class var startsServer: Bool { true }

    var messagesPath: String { "/v1/events/\(fixture.event.uuidString.lowercased())/messages" }

    func errorCode(_ r: APIClient.Response) -> String? {
        ((try? JSONSerialization.jsonObject(with: r.body)) as? [String: Any]).flatMap { ($0["error"] as? [String: Any])?["code"] as? String }
    }

    func testSendAsJSONReturns201WithTheMessage() throws {
        let body = try JSONSerialization.data(withJSONObject: ["message": "Gates open", "message_type": "alert", "priority": "urgent",
                                                               "expires_in_minutes": 10])
        let r = try server.api(fixture.adminToken).raw("POST", messagesPath, body: body, contentType: "application/json")
        XCTAssertEqual(r.status, 201)
        let m = try JSONDecoder().decode(StaffMessage.self, from: r.body)
        XCTAssertEqual(m.message, "Gates open")
        XCTAssertEqual(m.messageType, .alert)
        XCTAssertEqual(m.priority, .urgent)
        XCTAssertEqual(m.senderID, fixture.admin)
        XCTAssertNotNil(m.expiresAt)
        XCTAssertEqual(fixture.messageCount, 1)
    }

    func testSendAsPlainTextWithQueryParameters() throws {
        // What `curl -d "Gates open" …` sends: a form content type with the raw text.
        let r = try server.api(fixture.ownerToken).raw("POST", messagesPath, query: ["priority": "high", "message_type": "emergency"],
                                                       body: Data("Evacuate hall B".utf8),
                                                       contentType: "application/x-www-form-urlencoded")
        XCTAssertEqual(r.status, 201, String(decoding: r.body, as: UTF8.self))
        let m = try JSONDecoder().decode(StaffMessage.self, from: r.body)
        XCTAssertEqual(m.message, "Evacuate hall B")
        XCTAssertEqual(m.priority, .high)
        XCTAssertEqual(m.messageType, .emergency)
        let plain = try server.api(fixture.ownerToken).raw("POST", messagesPath, body: Data("Plain text".utf8), contentType: "text/plain")
        XCTAssertEqual(plain.status, 201)
    }

    func testSendIsLiveOnTheWebSocket() throws {
        let staff = try server.subscriber(fixture.staffToken, fixture.event)
        let r = try server.api(fixture.ownerToken).raw("POST", messagesPath, body: Data("via http".utf8), contentType: "text/plain")
        XCTAssertEqual(r.status, 201)
        XCTAssertEqual(try staff.expect("message").message?.message, "via http")
    }

    func testSendErrorsHaveTheirStatusAndStoreNothing() throws {
        let owner = try server.api(fixture.ownerToken)
        func post(_ body: String, query: [String: String] = [:], type: String = "text/plain", api: APIClient? = nil,
                  path: String? = nil) throws -> APIClient.Response {
            try (api ?? owner).raw("POST", path ?? messagesPath, query: query, body: Data(body.utf8), contentType: type)
        }
        var r = try post("")
        XCTAssertEqual(r.status, 400); XCTAssertEqual(errorCode(r), "invalid")
        r = try post(String(repeating: "x", count: 4_097))
        XCTAssertEqual(r.status, 413); XCTAssertEqual(errorCode(r), "too_large")
        r = try post(String(repeating: "x", count: 70_000))
        XCTAssertEqual(r.status, 413)
        r = try post("hi", query: ["priority": "meh"])
        XCTAssertEqual(r.status, 400)
        r = try post("hi", query: ["expires_in_minutes": "0"])
        XCTAssertEqual(r.status, 400)
        r = try post("{\"message\": 5}", type: "application/json")
        XCTAssertEqual(r.status, 400)
        r = try post("{broken", type: "application/json")
        XCTAssertEqual(r.status, 400)
        // A mistyped field is named, not ignored: this went out as a normal message before.
        r = try post(#"{"message": "Evacuate hall B", "priorty": "urgent"}"#, type: "application/json")
        XCTAssertEqual(r.status, 400)
        XCTAssertTrue(String(decoding: r.body, as: UTF8.self).contains("'priorty' (did you mean 'priority'?)"),
                      String(decoding: r.body, as: UTF8.self))
        r = try post("Evacuate hall B", query: ["prority": "urgent"])
        XCTAssertEqual(r.status, 400)
        XCTAssertTrue(String(decoding: r.body, as: UTF8.self).contains("parameter staffcast does not know: 'prority'"),
                      String(decoding: r.body, as: UTF8.self))
        r = try post("hi", api: try server.api(fixture.staffToken))
        XCTAssertEqual(r.status, 403); XCTAssertEqual(errorCode(r), "forbidden")
        r = try post("hi", api: try server.api(fixture.outsiderToken))
        XCTAssertEqual(r.status, 404) // an event one cannot see is answered as a missing one
        r = try post("hi", api: try server.api("sc_bad"))
        XCTAssertEqual(r.status, 401); XCTAssertEqual(errorCode(r), "unauthorized")
        r = try post("hi", api: try server.api(nil))
        XCTAssertEqual(r.status, 401)
        r = try post("hi", path: "/v1/events/\(UUID().uuidString)/messages")
        XCTAssertEqual(r.status, 404); XCTAssertEqual(errorCode(r), "not_found")
        r = try post("hi", path: "/v1/events/xyz/messages")
        XCTAssertEqual(r.status, 400)
        XCTAssertEqual(fixture.messageCount, 0)
    }

    func testListMessagesSinceSeq() throws {
        var seqs: [Int64] = []
        for i in 1...4 { seqs.append(try fixture.store.send(as: fixture.owner, SendRequest(eventID: fixture.event, message: "m\(i)")).seq) }
        let staff = try server.api(fixture.staffToken)
        let data = try staff.call("GET", messagesPath, query: ["since_seq": "\(seqs[1])", "limit": "10"])
        let object = try JSONSerialization.jsonObject(with: data) as? [String: Any]
        let messages = try JSONDecoder().decode([StaffMessage].self,
                                                from: JSONSerialization.data(withJSONObject: object?["messages"] ?? []))
        XCTAssertEqual(messages.map(\.message), ["m3", "m4"])
        XCTAssertEqual(try server.api(fixture.outsiderToken).raw("GET", messagesPath).status, 404)
        XCTAssertEqual(try staff.raw("GET", messagesPath, query: ["limit": "0"]).status, 400)
        XCTAssertEqual(try staff.raw("GET", messagesPath, query: ["since_seq": "abc"]).status, 400)
        // Paging back: before_seq alone was ignored (the newest page, again and again).
        let back = try staff.searchMessages(event: fixture.event, query: ["before_seq": "\(seqs[2])", "limit": "1"])
        XCTAssertEqual(back.messages.map(\.message), ["m2"])
        XCTAssertTrue(back.more)
        XCTAssertEqual(try staff.raw("GET", messagesPath, query: ["before_seq": "-1"]).status, 400)
        XCTAssertEqual(try staff.raw("GET", messagesPath, query: ["bogus": "1"]).status, 400)
        // An edit's query holds a token at most: ?priority=urgent beside a plain body changed nothing.
        let owner = try server.api(fixture.ownerToken)
        let m = try fixture.store.send(as: fixture.owner, SendRequest(eventID: fixture.event, message: "m5"))
        XCTAssertEqual(try owner.raw("PATCH", "/v1/messages/\(m.id.uuidString)", query: ["priority": "urgent"],
                                     body: Data("m5, corrected".utf8), contentType: "text/plain").status, 400)
        // An invite's mistyped field is named: {"max_use": 300} made a single-use invite.
        let invite = try owner.raw("POST", "/v1/events/\(fixture.event.uuidString.lowercased())/invites",
                                   body: Data(#"{"max_use":300}"#.utf8), contentType: "application/json")
        XCTAssertEqual(invite.status, 400)
        XCTAssertTrue(String(decoding: invite.body, as: UTF8.self).contains("'max_use' (did you mean 'max_uses'?)"),
                      String(decoding: invite.body, as: UTF8.self))
    }

    func testReceiptsAgreeWithReads() throws {
        let m = try fixture.store.send(as: fixture.owner, SendRequest(eventID: fixture.event, message: "read me"))
        _ = try fixture.store.markRead(as: fixture.staff, message: m.id)
        let path = "/v1/messages/\(m.id.uuidString.lowercased())/receipts"
        let data = try server.api(fixture.adminToken).call("GET", path)
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        XCTAssertEqual(object["message_id"] as? String, m.id.uuidString.lowercased())
        XCTAssertEqual(object["read_count"] as? Int, 1)
        let readBy = (object["read_by"] as? [[String: Any]])?.compactMap { $0["display_name"] as? String }
        let unreadBy = (object["unread_by"] as? [[String: Any]])?.compactMap { $0["display_name"] as? String }
        XCTAssertEqual(readBy, ["Sam Staff"])
        XCTAssertEqual(unreadBy, ["Adam Admin"]) // the sender is not waiting for their own message
        XCTAssertEqual(try server.api(fixture.staffToken).raw("GET", path).status, 403)
        XCTAssertEqual(try server.api(fixture.outsiderToken).raw("GET", path).status, 404)
    }

    func testNotificationRules() throws {
        let path = "/v1/users/\(fixture.staff.uuidString.lowercased())/notifications"
        let body = try JSONSerialization.data(withJSONObject: ["type": "shift", "title": "Break", "message": "Take 15"])
        let created = try server.api(fixture.adminToken).raw("POST", path, body: body, contentType: "application/json")
        XCTAssertEqual(created.status, 201)
        let n = try JSONDecoder().decode(StaffNotification.self, from: created.body)
        XCTAssertEqual(n.userID, fixture.staff)
        XCTAssertNil(n.data)
        // staff may not notify; nor may anyone notify a user with whom they share no event.
        XCTAssertEqual(try server.api(fixture.staffToken).raw("POST", "/v1/users/\(fixture.admin.uuidString)/notifications",
                                                            body: body, contentType: "application/json").status, 403)
        XCTAssertEqual(try server.api(fixture.adminToken).raw("POST", "/v1/users/\(fixture.outsider.uuidString)/notifications",
                                                            body: body, contentType: "application/json").status, 403)
        // A user who does not exist is answered like one you share no event with.
        XCTAssertEqual(try server.api(fixture.adminToken).raw("POST", "/v1/users/\(UUID().uuidString)/notifications",
                                                            body: body, contentType: "application/json").status, 403)
        let bad = try JSONSerialization.data(withJSONObject: ["type": "shift", "title": "", "message": "x"])
        XCTAssertEqual(try server.api(fixture.adminToken).raw("POST", path, body: bad, contentType: "application/json").status, 400)
        XCTAssertEqual(try fixture.count("SELECT count(*) FROM notifications"), 1)
        // Only the addressee reads it.
        let mine = try server.api(fixture.staffToken).call("GET", "/v1/me/notifications")
        XCTAssertTrue(String(decoding: mine, as: UTF8.self).contains(n.id.uuidString.lowercased()))
        let theirs = try server.api(fixture.adminToken).call("GET", "/v1/me/notifications")
        XCTAssertFalse(String(decoding: theirs, as: UTF8.self).contains(n.id.uuidString.lowercased()))
    }

    func testHealthReadinessStatusMetricsAndUnknownRoutes() throws {
        let anon = try server.api(nil)
        XCTAssertEqual(try anon.raw("GET", "/healthz").status, 200)
        XCTAssertEqual(try anon.raw("GET", "/readyz").status, 200)
        XCTAssertEqual(try anon.raw("GET", "/v1/status").status, 401)
        XCTAssertEqual(try server.api(fixture.staffToken).raw("GET", "/v1/status").status, 403)
        let status = try server.api(fixture.ownerToken).raw("GET", "/v1/status")
        XCTAssertEqual(status.status, 200)
        XCTAssertEqual(try server.api("ops-secret").raw("GET", "/v1/status").status, 200)
        let metrics = try anon.raw("GET", "/metrics")
        XCTAssertEqual(metrics.status, 200)
        XCTAssertTrue(String(decoding: metrics.body, as: UTF8.self).contains("staffcast_connections"))
        let missing = try anon.raw("GET", "/nothing/here")
        XCTAssertEqual(missing.status, 404)
        XCTAssertEqual(errorCode(missing), "not_found")
        XCTAssertEqual(try anon.raw("DELETE", "/healthz").status, 405)
    }

    func testHTTPSendsAreRateLimitedWith429() throws {
        server.stop()
        server = try TestServer(conninfo: fixture.conninfo) { $0.sendBurst = 2; $0.sendRatePerSecond = 0.01 }
        let api = try server.api(fixture.ownerToken)
        for i in 0..<2 {
            XCTAssertEqual(try api.raw("POST", messagesPath, body: Data("ok \(i)".utf8), contentType: "text/plain").status, 201)
        }
        let r = try api.raw("POST", messagesPath, body: Data("too many".utf8), contentType: "text/plain")
        XCTAssertEqual(r.status, 429)
        XCTAssertEqual(errorCode(r), "rate_limited")
        XCTAssertEqual(fixture.messageCount, 2)
    }
}
