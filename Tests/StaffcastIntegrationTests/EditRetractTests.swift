import Foundation
import StaffcastClient
import StaffcastCore
import StaffcastPostgres
import XCTest

/// Edit and retract (docs/protocol.md) through the WebSocket protocol and HTTP, with their access
/// rules, what history, catch-up and unread counts show afterwards, the audit of every version,
/// and the rules in SQL under row-level security.
final class EditRetractTests: IntegrationTestCase {
    override class var startsServer: Bool { true }

    func send(_ text: String, as user: UUID? = nil) throws -> StaffMessage {
        try fixture.store.send(as: user ?? fixture.admin, SendRequest(eventID: fixture.event, message: text))
    }

    func testEditOverTheWebSocketIsLiveAndShownInHistoryAndCatchUp() throws {
        let m = try send("Gates open at gate 3")
        let staff = try server.subscriber(fixture.staffToken, fixture.event)
        let admin = try server.connect(fixture.adminToken)
        try admin.send(["op": "edit", "ref": "e1", "message_id": m.id.uuidString, "message": "Gates open at gate 4"])
        guard case .messageUpdated(let ref, let edited) = try admin.expect("message_updated") else { return XCTFail() }
        XCTAssertEqual(ref, "e1")
        XCTAssertEqual(edited.message, "Gates open at gate 4")
        XCTAssertNotNil(edited.editedAt)
        guard case .messageUpdated(nil, let live) = try staff.expect("message_updated") else { return XCTFail() }
        XCTAssertEqual(live.id, m.id)
        XCTAssertEqual(live.message, "Gates open at gate 4")
        XCTAssertEqual(live.seq, m.seq, "an edit keeps the message's place")
        // History and catch-up show the latest text with edited_at.
        let fresh = try server.connect(fixture.staffToken)
        let sub = try fresh.subscribe(fixture.event)
        XCTAssertEqual(sub.history.map(\.message), ["Gates open at gate 4"])
        XCTAssertNotNil(sub.history.first?.editedAt)
        let caughtUp = try server.connect(fixture.staffToken).subscribe(fixture.event, sinceSeq: 0)
        XCTAssertEqual(caughtUp.history.first?.message, "Gates open at gate 4")
        // The audit keeps every version.
        _ = try server.api(fixture.ownerToken).editMessage(m.id, text: "Gates open at gate 4, north side")
        let versions = try fixture.store.messageVersions(as: fixture.owner, messageID: m.id)
        XCTAssertEqual(versions.map(\.oldMessage), ["Gates open at gate 3", "Gates open at gate 4"])
        XCTAssertEqual(versions.map(\.newMessage), ["Gates open at gate 4", "Gates open at gate 4, north side"])
        XCTAssertEqual(versions.map(\.actorID), [fixture.admin, fixture.owner])
        XCTAssertEqual(try fixture.store.messageVersions(as: fixture.staff, messageID: m.id), [], "the audit is for organisers")
    }

    /// Requests sent back to back on one connection are carried out in the order sent: the
    /// attack round sent five edits of one message without waiting and the second one stuck
    /// (they ran on several database workers at once), and four replies left an earlier one as
    /// the person's latest.
    func testEditsAndRepliesSentBackToBackAreCarriedOutInOrder() throws {
        let m = try send("Meet at gate 1")
        let admin = try server.connect(fixture.adminToken)
        for i in 0..<8 {
            try admin.send(["op": "edit", "ref": "e\(i)", "message_id": m.id.uuidString, "message": "Meet at gate \(i + 2)"])
        }
        var refs: [String?] = []
        for _ in 0..<8 {
            guard case .messageUpdated(let ref, _) = try admin.expect("message_updated") else { return XCTFail() }
            refs.append(ref)
        }
        XCTAssertEqual(refs, (0..<8).map { "e\($0)" }, "answered in the order sent")
        let versions = try fixture.store.messageVersions(as: fixture.owner, messageID: m.id)
        XCTAssertEqual(versions.map(\.newMessage), (0..<8).map { "Meet at gate \($0 + 2)" }, "carried out in the order sent")
        XCTAssertEqual(try server.connect(fixture.staffToken).subscribe(fixture.event).history.first?.message, "Meet at gate 9")

        let staff = try server.connect(fixture.staffToken)
        let statuses = ["on_my_way", "running_late", "cannot_make_it", "done"]
        for (i, status) in statuses.enumerated() {
            try staff.send(["op": "reply", "ref": "r\(i)", "message_id": m.id.uuidString, "status": status])
        }
        var replied: [String?] = []
        for _ in statuses {
            guard case .replied(let ref, _) = try staff.expect("replied") else { return XCTFail() }
            replied.append(ref)
        }
        XCTAssertEqual(replied, ["r0", "r1", "r2", "r3"])
        let latest = try server.api(fixture.ownerToken).call("GET", "/v1/messages/\(m.id.uuidString.lowercased())/replies")
        XCTAssertTrue(String(decoding: latest, as: UTF8.self).contains(#""status":"done""#), String(decoding: latest, as: UTF8.self))
    }

    /// Over HTTP too: eight edits pipelined on one connection are carried out in the order sent
    /// (they ran side by side on the workers, as on the WebSocket).
    func testPipelinedHTTPEditsAreCarriedOutInOrder() throws {
        let m = try send("Meet at gate 1")
        let socket = try RawSocket(port: server.port)
        defer { socket.close() }
        var requests = ""
        for i in 0..<8 {
            let body = #"{"message":"Meet at gate \#(i + 2)"}"#
            requests += "PATCH /v1/messages/\(m.id.uuidString.lowercased()) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                + "Authorization: Bearer \(fixture.adminToken)\r\nContent-Type: application/json\r\n"
                + "Content-Length: \(body.utf8.count)\r\n\r\n\(body)"
        }
        try socket.send(requests)
        for i in 0..<8 {
            XCTAssertEqual(try socket.readResponse(deadline: Date().addingTimeInterval(10)).status, 200, "edit \(i)")
        }
        let versions = try fixture.store.messageVersions(as: fixture.owner, messageID: m.id)
        XCTAssertEqual(versions.map(\.newMessage), (0..<8).map { "Meet at gate \($0 + 2)" }, "carried out in the order sent")
    }

    /// A phone offline while "Meet at gate 7" was corrected and another message retracted
    /// caught up with neither (attack round 3): an edit keeps its seq, so a catch-up after
    /// since_seq never carried it, and a retracted emergency kept ringing. The subscribe now
    /// sends both just before `subscribed` (whose unread count already leaves the retracted
    /// one out), only for what the subscriber may see.
    func testACatchUpBringsEditsAndRetractsMissedWhileAway() throws {
        let edited = try send("Meet at gate 7")
        let retracted = try send("Evacuate hall B")
        _ = try fixture.store.createTeam(as: fixture.owner, event: fixture.event, name: "Security", kind: .team)
        // Someone besides the sender, not the staff member (a send to an empty team is refused).
        try fixture.store.addTeamMember(as: fixture.owner, event: fixture.event, team: "Security", member: fixture.owner)
        let hidden = try fixture.store.send(as: fixture.admin, SendRequest(eventID: fixture.event, message: "Security only")
            .withTeams(["Security"]))
        let cursor = hidden.seq // the last message the phone had seen
        let admin = try server.api(fixture.adminToken)
        _ = try admin.editMessage(edited.id, text: "Meet at gate 9")
        _ = try admin.editMessage(hidden.id, text: "Security only, corrected")
        XCTAssertEqual(try admin.raw("DELETE", "/v1/messages/\(retracted.id.uuidString)").status, 200)

        /// The frames up to and including `subscribed`, then anything within a second after.
        func catchUp(_ token: String) throws -> (before: [ServerFrame], subscribed: ServerFrame?, after: [ServerFrame]) {
            let socket = try server.connect(token)
            try socket.send(["op": "subscribe", "event_id": fixture.event.uuidString.lowercased(), "since_seq": cursor, "ref": "s"])
            var before: [ServerFrame] = []
            while let frame = try socket.nextOrNil(timeout: 5) {
                if frame.op == "subscribed" {
                    var after: [ServerFrame] = []
                    while let more = try socket.nextOrNil(timeout: 1) { after.append(more) }
                    return (before, frame, after)
                }
                before.append(frame)
            }
            return (before, nil, [])
        }
        let phone = try catchUp(fixture.staffToken)
        guard case .subscribed(_, _, let history, let unread, _)? = phone.subscribed else { return XCTFail("no subscribed") }
        XCTAssertEqual(history, [], "nothing new was sent")
        XCTAssertEqual(unread, 1, "the edited message is unread; the retracted one no longer counts")
        var updated: [UUID: String] = [:], gone: [UUID] = []
        for frame in phone.before {
            if case .messageUpdated(nil, let m) = frame { updated[m.id] = m.message }
            if case .messageRetracted(nil, let id, _) = frame { gone.append(id) }
        }
        XCTAssertEqual(updated, [edited.id: "Meet at gate 9"], "the staff member is not in Security: its edit stays hidden")
        XCTAssertEqual(gone, [retracted.id])
        XCTAssertFalse(phone.after.contains { $0.op == "message_updated" || $0.op == "message_retracted" },
                       "after subscribed, a retract would be counted twice by the client")
        // An organiser sees the targeted one's edit too.
        let organiser = try catchUp(fixture.ownerToken)
        let seen = Set(organiser.before.compactMap { frame -> UUID? in
            if case .messageUpdated(nil, let m) = frame { return m.id } else { return nil }
        })
        XCTAssertEqual(seen, [edited.id, hidden.id])
        // A since_seq older than every message has nothing older to miss, and does not close
        // the window for others in the same batch.
        XCTAssertEqual(try fixture.store.subscribeBatch(event: fixture.event, [
            .init(user: fixture.staff, sinceSeq: 0), .init(user: fixture.staff, sinceSeq: cursor)]).entries.map(\.changes.count),
            [0, 2])
    }

    func testRetractLeavesHistoryCatchUpAndUnreadCounts() throws {
        let keep = try send("Lunch in the blue tent")
        let wrong = try send("Evacuate hall B")
        let staff = try server.connect(fixture.staffToken)
        XCTAssertEqual(try staff.subscribe(fixture.event).unread, 2)
        let owner = try server.connect(fixture.ownerToken)
        try owner.send(["op": "retract", "ref": "r1", "message_id": wrong.id.uuidString])
        guard case .messageRetracted(let ref, let id, let event) = try owner.expect("message_retracted") else { return XCTFail() }
        XCTAssertEqual(ref, "r1")
        XCTAssertEqual(id, wrong.id)
        XCTAssertEqual(event, fixture.event)
        guard case .messageRetracted(nil, let liveID, _) = try staff.expect("message_retracted") else { return XCTFail() }
        XCTAssertEqual(liveID, wrong.id)
        let again = try server.connect(fixture.staffToken).subscribe(fixture.event)
        XCTAssertEqual(again.history.map(\.id), [keep.id])
        XCTAssertEqual(again.unread, 1)
        XCTAssertEqual(try server.connect(fixture.staffToken).subscribe(fixture.event, sinceSeq: 0).history.map(\.id), [keep.id])
        let listed = try server.api(fixture.staffToken).searchMessages(event: fixture.event, query: [:])
        XCTAssertEqual(listed.messages.map(\.id), [keep.id])
        XCTAssertEqual(try server.api(fixture.staffToken).searchMessages(event: fixture.event,
                                                                           query: ["q": "hall", "include_expired": "true"]).messages, [])
        // The row stays (the audit keeps it); it no longer counts anywhere.
        XCTAssertEqual(try fixture.count("SELECT count(*) FROM staff_messages WHERE retracted_at IS NOT NULL"), 1)
        // A retracted message cannot be edited; retracting again answers the same.
        XCTAssertEqual(try owner.expectError(["op": "edit", "message_id": wrong.id.uuidString, "message": "x"]).code, .notFound)
        let twice = try server.api(fixture.ownerToken).raw("DELETE", "/v1/messages/\(wrong.id.uuidString)")
        XCTAssertEqual(twice.status, 200)
        // The same text may be sent again at once: a retracted message does not count for the guard.
        let resend = try server.api(fixture.ownerToken).raw("POST", "/v1/events/\(fixture.event.uuidString)/messages",
                                                            body: Data("Evacuate hall B".utf8), contentType: "text/plain")
        XCTAssertEqual(resend.status, 201)
    }

    /// Expired messages are never delivered: an edit of one is refused (`not_found`, as for a
    /// retracted one) over the WebSocket and HTTP, nothing changes and no subscriber hears of it.
    func testAnExpiredMessageCannotBeEditedAndNobodyHearsOfIt() throws {
        let m = try send("Shuttle at gate 2")
        try fixture.expire(m.id)
        let staff = try server.subscriber(fixture.staffToken, fixture.event)
        let admin = try server.connect(fixture.adminToken)
        let e = try admin.expectError(["op": "edit", "message_id": m.id.uuidString, "message": "Shuttle at gate 5"])
        XCTAssertEqual(e.code, .notFound)
        XCTAssertTrue(e.message.contains("has expired"), e.message)
        let r = try server.api(fixture.ownerToken).raw("PATCH", "/v1/messages/\(m.id.uuidString)", body: Data("x".utf8),
                                                       contentType: "text/plain")
        XCTAssertEqual(r.status, 404)
        try staff.expectSilence(1.5)
        XCTAssertEqual(try fixture.count("SELECT count(*) FROM staff_messages WHERE message = 'Shuttle at gate 2' AND edited_at IS NULL"), 1)
        XCTAssertEqual(try fixture.count("SELECT count(*) FROM message_changes WHERE message_id = $1", [m.id.uuidString]), 0)
    }

    func testHTTPEditAndRetract() throws {
        let m = try send("Shuttle at gate 2")
        let api = try server.api(fixture.adminToken)
        let r = try api.raw("PATCH", "/v1/messages/\(m.id.uuidString)",
                            body: try JSONSerialization.data(withJSONObject: ["message": "Shuttle at gate 5"]), contentType: "application/json")
        XCTAssertEqual(r.status, 200, String(decoding: r.body, as: UTF8.self))
        let edited = try JSONDecoder().decode(StaffMessage.self, from: r.body)
        XCTAssertEqual(edited.message, "Shuttle at gate 5")
        let object = try JSONSerialization.jsonObject(with: r.body) as? [String: Any]
        XCTAssertNotNil(object?["edited_at"] as? String)
        for bad in [#"{"message":""}"#, #"{"message":"a\u0000b"}"#, #"{"text":"x"}"#] {
            let b = try api.raw("PATCH", "/v1/messages/\(m.id.uuidString)", body: Data(bad.utf8), contentType: "application/json")
            XCTAssertEqual(b.status, 400, bad)
        }
        // Only the text can be edited: a priority beside it answered 200 having changed nothing.
        let priority = try api.raw("PATCH", "/v1/messages/\(m.id.uuidString)",
                                   body: Data(#"{"message":"Shuttle at gate 6","priority":"urgent"}"#.utf8), contentType: "application/json")
        XCTAssertEqual(priority.status, 400)
        XCTAssertTrue(String(decoding: priority.body, as: UTF8.self).contains("changes only the text"))
        let d = try api.raw("DELETE", "/v1/messages/\(m.id.uuidString)")
        XCTAssertEqual(d.status, 200)
        let body = try JSONSerialization.jsonObject(with: d.body) as? [String: Any]
        XCTAssertEqual(body?["message_id"] as? String, m.id.uuidString.lowercased())
        XCTAssertEqual(body?["retracted"] as? Bool, true)
        XCTAssertEqual(try api.raw("DELETE", "/v1/messages/\(UUID().uuidString)").status, 404)
        XCTAssertEqual(try api.raw("GET", "/v1/messages/\(m.id.uuidString)").status, 405)
    }

    func testStaffCannotEditOrRetractAndOutsidersSeeNothing() throws {
        let m = try send("Gates open")
        let staff = try server.connect(fixture.staffToken)
        XCTAssertEqual(try staff.expectError(["op": "edit", "message_id": m.id.uuidString, "message": "hacked"]).code, .forbidden)
        XCTAssertEqual(try staff.expectError(["op": "retract", "message_id": m.id.uuidString]).code, .forbidden)
        XCTAssertEqual(try server.api(fixture.staffToken).raw("DELETE", "/v1/messages/\(m.id.uuidString)").status, 403)
        let outsider = try server.api(fixture.outsiderToken)
        XCTAssertEqual(try outsider.raw("DELETE", "/v1/messages/\(m.id.uuidString)").status, 404)
        XCTAssertEqual(try outsider.raw("PATCH", "/v1/messages/\(m.id.uuidString)", body: Data("x".utf8), contentType: "text/plain").status, 404)
        XCTAssertEqual(try fixture.count("SELECT count(*) FROM staff_messages WHERE message = 'Gates open' AND retracted_at IS NULL"), 1)
        // Subscribers of another event get nothing of it.
        let other = try fixture.store.createEvent(name: "Other", startsAt: nil)
        try fixture.store.grant(event: other, user: fixture.outsider, level: .staff)
        let otherSocket = try server.subscriber(fixture.outsiderToken, other)
        _ = try server.api(fixture.ownerToken).editMessage(m.id, text: "Gates open now")
        try otherSocket.expectSilence(1.5)
    }

    /// The same rules directly in SQL, as the server acts for each user.
    func testRowLevelSecurityRefusesStaffEditsAndHidesTheAudit() throws {
        let m = try send("Original")
        let conn = try PGConnection(conninfo: fixture.conninfo)
        func update(_ user: UUID, _ set: String) throws -> Int {
            try conn.transaction(asUser: user) { try $0.query("UPDATE staff_messages SET \(set) WHERE id = $1", [m.id.uuidString]).affectedRows }
        }
        XCTAssertThrowsError(try update(fixture.staff, "message = 'by staff'")) { e in
            XCTAssertEqual((e as? PostgresError)?.sqlState, "42501")
        }
        XCTAssertThrowsError(try update(fixture.staff, "retracted_at = now()")) { e in
            XCTAssertEqual((e as? PostgresError)?.sqlState, "42501")
        }
        XCTAssertEqual(try update(fixture.outsider, "message = 'by outsider'"), 0, "an outsider sees no row to change")
        XCTAssertEqual(try update(fixture.admin, "message = 'by admin', edited_at = now()"), 1)
        XCTAssertEqual(try update(fixture.owner, "retracted_at = now()"), 1)
        XCTAssertThrowsError(try update(fixture.owner, "message = 'after retract'")) { e in
            XCTAssertEqual((e as? PostgresError)?.sqlState, "42501")
        }
        // Users cannot write the audit themselves, and only organisers read it.
        XCTAssertThrowsError(try conn.transaction(asUser: fixture.owner) {
            try $0.query("INSERT INTO message_changes (message_id, event_id, action, old_message) VALUES ($1, $2, 'edit', 'x')",
                         [m.id.uuidString, fixture.event.uuidString])
        }) { e in XCTAssertEqual((e as? PostgresError)?.sqlState, "42501") }
        func audit(_ user: UUID) throws -> Int {
            try conn.transaction(asUser: user) { try $0.query("SELECT count(*) FROM message_changes").int(0, 0) ?? -1 }
        }
        XCTAssertEqual(try audit(fixture.owner), 2)
        XCTAssertEqual(try audit(fixture.staff), 0)
        XCTAssertEqual(try audit(fixture.outsider), 0)
    }
}
