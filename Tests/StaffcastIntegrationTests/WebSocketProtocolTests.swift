import Foundation
import StaffcastClient
import StaffcastCore
import XCTest

/// Every op of protocol v1 against a real server and a real PostgreSQL.
final class WebSocketProtocolTests: IntegrationTestCase {
    override class var startsServer: Bool { true }

    func eventID() -> String { fixture.event.uuidString.lowercased() }

    func testHelloNamesTheUser() throws {
        let socket = TestSocket(try WebSocketClient(url: server.ws, headers: ["Authorization": "Bearer \(fixture.staffToken)"]))
        guard case .hello(let user, let time, _, let features) = try socket.next() else { return XCTFail("no hello") }
        XCTAssertEqual(features, ["subscribe_in_url"], "clients subscribe with a frame when a server does not say it")
        XCTAssertEqual(user.userID, fixture.staff)
        XCTAssertEqual(user.displayName, "Sam Staff")
        XCTAssertLessThan(abs(time.timeIntervalSinceNow), 60)
        XCTAssertEqual(socket.client.responseHeaders["sec-websocket-protocol"], "staffcast.v1")
    }

    func testTokenInQueryIsAccepted() throws {
        let socket = TestSocket(try WebSocketClient(url: server.ws + "?access_token=\(fixture.staffToken)"))
        guard case .hello(let user, _, _, _) = try socket.next() else { return XCTFail("no hello") }
        XCTAssertEqual(user.userID, fixture.staff)
    }

    func testSendReachesSubscribersLiveAndAcksSender() throws {
        let staff = try server.connect(fixture.staffToken)
        let (history, unread) = try staff.subscribe(fixture.event)
        XCTAssertEqual(history, [])
        XCTAssertEqual(unread, 0)

        let owner = try server.connect(fixture.ownerToken)
        try owner.send(["op": "send", "ref": "s1", "event_id": eventID(), "message": "Gates open in 15 minutes",
                        "message_type": "alert", "priority": "high", "expires_in_minutes": 30])
        guard case .sent(let ref, let sent) = try owner.expect("sent") else { return XCTFail() }
        XCTAssertEqual(ref, "s1")
        XCTAssertEqual(sent.message, "Gates open in 15 minutes")
        XCTAssertEqual(sent.messageType, .alert)
        XCTAssertEqual(sent.priority, .high)
        XCTAssertEqual(sent.senderName, "Olivia Owner")
        let expires = try XCTUnwrap(sent.expiresAt)
        XCTAssertEqual(expires.timeIntervalSince(sent.sentAt), 30 * 60, accuracy: 2)
        // The ack comes after commit: the row is there.
        XCTAssertEqual(try fixture.count("SELECT count(*) FROM staff_messages WHERE id = $1", [sent.id.uuidString]), 1)

        guard case .message(let live) = try staff.expect("message") else { return XCTFail() }
        XCTAssertEqual(live.id, sent.id)
        XCTAssertEqual(live.seq, sent.seq)
        XCTAssertFalse(live.read)
    }

    func testDefaultsAreBroadcastAndNormal() throws {
        let owner = try server.connect(fixture.ownerToken)
        try owner.send(["op": "send", "event_id": eventID(), "message": "Hello"])
        guard case .sent(_, let m) = try owner.expect("sent") else { return XCTFail() }
        XCTAssertEqual(m.messageType, .broadcast)
        XCTAssertEqual(m.priority, .normal)
        XCTAssertNil(m.expiresAt)
    }

    func testSubscribeGivesLastFiftyUnexpiredOldestFirstWithUnreadCount() throws {
        for i in 1...55 { _ = try fixture.store.send(as: fixture.owner, SendRequest(eventID: fixture.event, message: "m\(i)")) }
        let staff = try server.connect(fixture.staffToken)
        let (history, unread) = try staff.subscribe(fixture.event)
        XCTAssertEqual(history.count, 50)
        XCTAssertEqual(history.first?.message, "m6")
        XCTAssertEqual(history.last?.message, "m55")
        XCTAssertEqual(history.map(\.seq), history.map(\.seq).sorted())
        XCTAssertEqual(unread, 55)
    }

    func testSinceSeqReplaysExactlyWhatCameAfter() throws {
        var seqs: [Int64] = []
        for i in 1...5 { seqs.append(try fixture.store.send(as: fixture.owner, SendRequest(eventID: fixture.event, message: "m\(i)")).seq) }
        let staff = try server.connect(fixture.staffToken)
        let (history, _) = try staff.subscribe(fixture.event, sinceSeq: seqs[2])
        XCTAssertEqual(history.map(\.message), ["m4", "m5"])
    }

    func testMarkReadIsIdempotentAndLowersUnread() throws {
        let m1 = try fixture.store.send(as: fixture.owner, SendRequest(eventID: fixture.event, message: "one"))
        _ = try fixture.store.send(as: fixture.owner, SendRequest(eventID: fixture.event, message: "two"))
        let staff = try server.connect(fixture.staffToken)
        XCTAssertEqual(try staff.subscribe(fixture.event).unread, 2)
        for _ in 0..<2 {
            try staff.send(["op": "mark_read", "ref": "r", "message_id": m1.id.uuidString])
            guard case .read(let ref, let messageID, let event, let unread, _) = try staff.expect("read") else { return XCTFail() }
            XCTAssertEqual(ref, "r")
            XCTAssertEqual(messageID, m1.id)
            XCTAssertEqual(event, fixture.event)
            XCTAssertEqual(unread, 1)
        }
        XCTAssertEqual(try fixture.count("SELECT cardinality(read_by) FROM staff_messages WHERE id = $1", [m1.id.uuidString]), 1)
        // The history now shows it read, for this user only.
        try staff.send(["op": "history", "event_id": eventID()])
        guard case .history(_, _, let messages, _) = try staff.expect("history") else { return XCTFail() }
        XCTAssertEqual(messages.map(\.read), [true, false])
        XCTAssertEqual(messages.first?.readCount, 1)
    }

    func testHistoryPagesBackwards() throws {
        var sent: [StaffMessage] = []
        for i in 1...10 { sent.append(try fixture.store.send(as: fixture.owner, SendRequest(eventID: fixture.event, message: "m\(i)"))) }
        let staff = try server.connect(fixture.staffToken)
        try staff.send(["op": "history", "ref": "h", "event_id": eventID(), "before_seq": sent[5].seq, "limit": 3])
        guard case .history(let ref, let event, let messages, _) = try staff.expect("history") else { return XCTFail() }
        XCTAssertEqual(ref, "h")
        XCTAssertEqual(event, fixture.event)
        XCTAssertEqual(messages.map(\.message), ["m3", "m4", "m5"])
    }

    func testUnsubscribeStopsDelivery() throws {
        let staff = try server.subscriber(fixture.staffToken, fixture.event)
        try staff.send(["op": "unsubscribe", "ref": "u", "event_id": eventID()])
        guard case .unsubscribed(let ref, let event) = try staff.expect("unsubscribed") else { return XCTFail() }
        XCTAssertEqual(ref, "u")
        XCTAssertEqual(event, fixture.event)
        _ = try fixture.store.send(as: fixture.owner, SendRequest(eventID: fixture.event, message: "not for you"))
        try staff.expectSilence(1.5)
    }

    func testPingPong() throws {
        let socket = try server.connect(fixture.staffToken)
        try socket.send(["op": "ping", "ref": "p"])
        XCTAssertEqual(try socket.expect("pong").ref, "p")
    }

    func testNotificationsGoLiveToTheirUserWhereverTheyAre() throws {
        let staff = try server.connect(fixture.staffToken) // subscribed to nothing
        let api = try server.api(fixture.adminToken)
        let body = try JSONSerialization.data(withJSONObject: ["type": "shift", "title": "Break", "message": "Take 15", "data": ["gate": 3]])
        let data = try api.call("POST", "/v1/users/\(fixture.staff.uuidString.lowercased())/notifications", body: body,
                                contentType: "application/json")
        let created = try JSONDecoder().decode(StaffNotification.self, from: data)
        guard case .notification(let live) = try staff.expect("notification") else { return XCTFail() }
        XCTAssertEqual(live.id, created.id)
        XCTAssertEqual(live.title, "Break")
        XCTAssertEqual(live.data, .object(["gate": .number(3)]))
        XCTAssertFalse(live.read)

        try staff.send(["op": "mark_notification_read", "ref": "n", "notification_id": created.id.uuidString])
        guard case .notificationRead(let ref, let id) = try staff.expect("notification_read") else { return XCTFail() }
        XCTAssertEqual(ref, "n")
        XCTAssertEqual(id, created.id)
        XCTAssertEqual(try fixture.count("SELECT count(*) FROM notifications WHERE read AND read_at IS NOT NULL"), 1)

        // Someone else's notification is not found for the outsider.
        let outsider = try server.connect(fixture.outsiderToken)
        let e = try outsider.expectError(["op": "mark_notification_read", "notification_id": created.id.uuidString])
        XCTAssertEqual(e.code, .notFound)
    }

    func testListEvents() throws {
        let staff = try server.connect(fixture.staffToken)
        try staff.send(["op": "list_events", "ref": "e"])
        guard case .events(_, let events) = try staff.expect("events") else { return XCTFail() }
        XCTAssertEqual(events.map(\.id), [fixture.event])
        XCTAssertEqual(events.first?.accessLevel, .staff)
        XCTAssertEqual(events.first?.name, "Summer Festival")
    }

    func testExpiredMessagesAreNeitherReplayedNorCountedNorDelivered() throws {
        let staff = try server.subscriber(fixture.staffToken, fixture.event)
        // An already expired row, committed directly: the listener must not deliver it.
        try fixture.store.conn.query("""
            INSERT INTO staff_messages (event_id, sender_id, message, message_type, priority, sent_at, expires_at)
            VALUES ($1, $2, 'old news', 'broadcast', 'normal', now() - interval '2 hours', now() - interval '1 hour')
            """, [fixture.event.uuidString, fixture.owner.uuidString])
        _ = try fixture.store.send(as: fixture.owner, SendRequest(eventID: fixture.event, message: "fresh"))
        guard case .message(let live) = try staff.expect("message") else { return XCTFail() }
        XCTAssertEqual(live.message, "fresh")
        try staff.expectSilence(1)

        let again = try server.connect(fixture.staffToken)
        let (history, unread) = try again.subscribe(fixture.event)
        XCTAssertEqual(history.map(\.message), ["fresh"])
        XCTAssertEqual(unread, 1)
        let (since, _) = try again.subscribe(fixture.event, sinceSeq: 0)
        XCTAssertEqual(since.map(\.message), ["fresh"])
    }
}
