import Foundation
import StaffcastClient
import StaffcastCore
import StaffcastPostgres
import XCTest

/// Search and the archive, and the double-send guard (docs/protocol.md), against a real server.
final class SearchAndGuardTests: IntegrationTestCase {
    override func setUpWithError() throws {
        try super.setUpWithError()
        try startServer() // duplicate_window_minutes: the default, 10
    }

    var messagesPath: String { "/v1/events/\(fixture.event.uuidString.lowercased())/messages" }

    func errorCode(_ r: APIClient.Response) -> String? {
        ((try? JSONSerialization.jsonObject(with: r.body)) as? [String: Any]).flatMap { ($0["error"] as? [String: Any])?["code"] as? String }
    }

    func post(_ token: String, _ body: [String: Any]) throws -> APIClient.Response {
        try server.api(token).raw("POST", messagesPath, body: try JSONSerialization.data(withJSONObject: body), contentType: "application/json")
    }

    // MARK: the double-send guard

    func testTheSameTextTwiceIsRefusedWith409UnlessForced() throws {
        XCTAssertEqual(try post(fixture.ownerToken, ["message": "Gates open"]).status, 201)
        // A second organiser announces the same thing.
        let again = try post(fixture.adminToken, ["message": "Gates open"])
        XCTAssertEqual(again.status, 409)
        XCTAssertEqual(errorCode(again), "conflict")
        XCTAssertEqual(fixture.messageCount, 1)
        XCTAssertEqual(try post(fixture.adminToken, ["message": "Gates open", "force": true]).status, 201)
        XCTAssertEqual(fixture.messageCount, 2)
        // Other text, or the same text to another event, is fine.
        XCTAssertEqual(try post(fixture.adminToken, ["message": "Gates open at 9"]).status, 201)
        let other = try fixture.store.createEvent(name: "Other", startsAt: nil)
        try fixture.store.grant(event: other, user: fixture.owner, level: .owner)
        let r = try server.api(fixture.ownerToken).raw("POST", "/v1/events/\(other.uuidString)/messages",
                                                       body: Data("Gates open".utf8), contentType: "text/plain")
        XCTAssertEqual(r.status, 201)
        // The plain-text form takes force as a query parameter.
        let plain = try server.api(fixture.ownerToken).raw("POST", messagesPath, query: ["force": "true"],
                                                           body: Data("Gates open".utf8), contentType: "text/plain")
        XCTAssertEqual(plain.status, 201)
    }

    func testGuardOnTheWebSocket() throws {
        let owner = try server.connect(fixture.ownerToken)
        let admin = try server.connect(fixture.adminToken)
        let event = fixture.event.uuidString
        try owner.send(["op": "send", "ref": "a", "event_id": event, "message": "Lunch is served"])
        _ = try owner.expect("sent")
        let e = try admin.expectError(["op": "send", "ref": "b", "event_id": event, "message": "Lunch is served"])
        XCTAssertEqual(e.code, .conflict)
        XCTAssertTrue(e.message.contains("force"))
        try admin.send(["op": "send", "ref": "c", "event_id": event, "message": "Lunch is served", "force": true])
        guard case .sent(let ref, _) = try admin.expect("sent") else { return XCTFail() }
        XCTAssertEqual(ref, "c")
        XCTAssertEqual(fixture.messageCount, 2)
    }

    /// Sends that arrive together are one group commit: the duplicate among them fails alone,
    /// and the others of its batch are stored.
    func testOneDuplicateInABatchFailsAlone() throws {
        let owner = try server.connect(fixture.ownerToken)
        let event = fixture.event.uuidString
        let texts = ["one", "two", "Gates open", "three", "Gates open", "four"]
        let (sent, refused) = try owner.sendBatch(texts.enumerated().map { i, text in
            ["op": "send", "ref": "r\(i)", "event_id": event, "message": text]
        })
        XCTAssertEqual(sent, ["r0", "r1", "r2", "r3", "r5"])
        XCTAssertEqual(refused, ["r4": .conflict])
        XCTAssertEqual(fixture.messageCount, 5)
    }

    func testGuardAppliesInsideOneBatchOfTheStore() throws {
        let request = try SendRequest(eventID: fixture.event, message: "Same")
        var forced = request
        forced.force = true
        let sends = [Store.PendingSend(sender: fixture.owner, request: request),
                     Store.PendingSend(sender: fixture.admin, request: request),
                     Store.PendingSend(sender: fixture.admin, request: forced)]
        let stored = try fixture.store.sendBatch(sends, duplicateWindowMinutes: 10)
        XCTAssertNotNil(stored[0])
        XCTAssertNil(stored[1], "the second copy is left for its retry alone")
        XCTAssertNotNil(stored[2], "force sends it anyway")
        XCTAssertThrowsError(try fixture.store.send(as: fixture.admin, request, duplicateWindowMinutes: 10)) { e in
            XCTAssertEqual((e as? StaffcastError)?.code, .conflict)
        }
        // Window 0: no guard.
        XCTAssertNoThrow(try fixture.store.send(as: fixture.admin, request, duplicateWindowMinutes: 0))
    }

    func testGuardWindowIsConfigurable() throws {
        server.stop()
        server = try TestServer(conninfo: fixture.conninfo) { $0.duplicateWindowMinutes = 0 }
        XCTAssertEqual(try post(fixture.ownerToken, ["message": "Twice is fine"]).status, 201)
        XCTAssertEqual(try post(fixture.ownerToken, ["message": "Twice is fine"]).status, 201)
    }

    // MARK: search and the archive

    /// A known set: six messages by two senders, of several types and priorities, two of them
    /// expired (sent "last week" and expired since).
    func makeKnownSet() throws -> [String: StaffMessage] {
        let s = fixture.store
        var m: [String: StaffMessage] = [:]
        func send(_ key: String, _ user: UUID, _ text: String, type: String = "broadcast", priority: String = "normal") throws {
            m[key] = try s.send(as: user, SendRequest(eventID: fixture.event, message: text, messageType: type, priority: priority))
        }
        try send("gate", fixture.owner, "Gate 3 opens at 9", type: "alert", priority: "high")
        try send("lunch", fixture.owner, "Lunch in the blue tent")
        try send("evac", fixture.admin, "Evacuate hall B", type: "emergency", priority: "urgent")
        try send("oldgate", fixture.admin, "Gate 5 closed (last week)", type: "alert", priority: "low")
        try send("oldlunch", fixture.owner, "Lunch moved to 1pm (last week)")
        try send("percent", fixture.admin, "Merch 50% off")
        // Last week's two: sent eight days ago, expired seven days ago.
        for key in ["oldgate", "oldlunch"] {
            try s.conn.execute("""
                UPDATE staff_messages SET sent_at = now() - interval '8 days', expires_at = now() - interval '7 days'
                WHERE id = '\(m[key]!.id.uuidString.lowercased())'
                """)
        }
        return m
    }

    func search(_ query: [String: String], token: String? = nil) throws -> [String] {
        try server.api(token ?? fixture.staffToken).searchMessages(event: fixture.event, query: query).messages.map(\.message)
    }

    func testSearchFiltersAgainstAKnownSet() throws {
        _ = try makeKnownSet()
        XCTAssertEqual(try search(["q": "gate"]), ["Gate 3 opens at 9"])
        XCTAssertEqual(try search(["q": "GATE", "include_expired": "true"]), ["Gate 3 opens at 9", "Gate 5 closed (last week)"])
        XCTAssertEqual(try search(["type": "alert", "include_expired": "true"]), ["Gate 3 opens at 9", "Gate 5 closed (last week)"])
        XCTAssertEqual(try search(["priority": "urgent"]), ["Evacuate hall B"])
        XCTAssertEqual(try search(["sender": fixture.admin.uuidString]), ["Evacuate hall B", "Merch 50% off"])
        XCTAssertEqual(try search(["sender": "olivia", "include_expired": "true"]),
                       ["Gate 3 opens at 9", "Lunch in the blue tent", "Lunch moved to 1pm (last week)"])
        // % and _ are literal.
        XCTAssertEqual(try search(["q": "50%"]), ["Merch 50% off"])
        XCTAssertEqual(try search(["q": "_"]), [])
        // The archive: last week's expired announcements, found by time.
        let weekAgo = RFC3339.format(Date().addingTimeInterval(-9 * 86_400))
        let yesterday = RFC3339.format(Date().addingTimeInterval(-86_400))
        XCTAssertEqual(try search(["from": weekAgo, "to": yesterday]), [], "expired ones only with include_expired")
        XCTAssertEqual(try search(["from": weekAgo, "to": yesterday, "include_expired": "true"]),
                       ["Gate 5 closed (last week)", "Lunch moved to 1pm (last week)"])
        XCTAssertEqual(try search(["from": yesterday, "q": "lunch"]), ["Lunch in the blue tent"])
        // Limit and paging back.
        let page = try server.api(fixture.staffToken).searchMessages(event: fixture.event, query: ["include_expired": "true", "limit": "2"])
        XCTAssertEqual(page.messages.map(\.message), ["Lunch moved to 1pm (last week)", "Merch 50% off"])
        XCTAssertEqual(page.messages.count, 2)
        XCTAssertEqual(page.more, true)
        // Expired messages never return to live lists or unread counts.
        let staff = try server.connect(fixture.staffToken)
        let subscribed = try staff.subscribe(fixture.event)
        XCTAssertEqual(subscribed.unread, 4)
        XCTAssertFalse(subscribed.history.contains { $0.message.contains("last week") })
        let plain = try server.api(fixture.staffToken).searchMessages(event: fixture.event, query: [:])
        XCTAssertEqual(plain.messages.count, 4)
    }

    /// The embedded cluster's locale is C, whose ILIKE folds only A–Z: "évacuation" did not find
    /// "ÉVACUATION" (attack round 3).
    func testSearchIgnoresCaseInEveryScript() throws {
        _ = try fixture.store.send(as: fixture.admin, SendRequest(eventID: fixture.event, message: "ÉVACUATION ÜBERGANG Nord"))
        _ = try fixture.store.send(as: fixture.admin, SendRequest(eventID: fixture.event, message: "İstanbul kapısı ΑΘΗΝΑ"))
        XCTAssertEqual(try search(["q": "évacuation"]), ["ÉVACUATION ÜBERGANG Nord"])
        XCTAssertEqual(try search(["q": "übergang nord"]), ["ÉVACUATION ÜBERGANG Nord"])
        XCTAssertEqual(try search(["q": "αθηνα"]), ["İstanbul kapısı ΑΘΗΝΑ"])
    }

    func testSearchErrorsAndAccess() throws {
        _ = try makeKnownSet()
        let api = try server.api(fixture.staffToken)
        for bad: [String: String] in [["type": "gossip"], ["from": "last tuesday"], ["include_expired": "yes"]] {
            let r = try api.raw("GET", messagesPath, query: bad)
            XCTAssertEqual(r.status, 400, "\(bad)")
            XCTAssertEqual(errorCode(r), "invalid")
        }
        let outsider = try server.api(fixture.outsiderToken).raw("GET", messagesPath, query: ["q": "gate", "include_expired": "true"])
        XCTAssertEqual(outsider.status, 404, "an event one cannot see is answered as a missing one")
        XCTAssertEqual(try server.api(fixture.outsiderToken).raw("GET", "/v1/events/\(UUID().uuidString)/messages",
                                                                  query: ["q": "x"]).status, 404)
    }
}
