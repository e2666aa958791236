import Foundation
import StaffcastClient
import StaffcastCore
import StaffcastPostgres
import XCTest

/// Messages to teams and zones (docs/protocol.md, Audiences), end to end with real sockets and
/// PostgreSQL: a team message exists for its members and the event's admins and owners only —
/// live, in history, catch-up, search, unread counts, receipts, the escalation audience and a
/// direct SQL read under row-level security — and who it was for is fixed when it is sent.
final class AudienceTests: IntegrationTestCase {
    override class var startsServer: Bool { true }
    override class var secondStaffName: String? { "Nora Nonmember" }
    /// Staff who are not in the team.
    var other: UUID { secondStaff.id }
    var otherToken: String { secondStaff.token }

    override func setUpWithError() throws {
        try super.setUpWithError()
        _ = try fixture.store.createTeam(as: fixture.owner, event: fixture.event, name: "Security", kind: .team)
        try fixture.store.addTeamMember(as: fixture.owner, event: fixture.event, team: "Security", member: fixture.staff)
    }


    var base: String { "/v1/events/\(fixture.event.uuidString.lowercased())" }

    func sendHTTP(_ token: String, _ body: [String: Any]) throws -> APIClient.Response {
        try server.api(token).raw("POST", base + "/messages", body: try JSONSerialization.data(withJSONObject: body),
                                  contentType: "application/json")
    }

    func messages(_ token: String, _ query: [String: String] = [:]) throws -> [StaffMessage] {
        let r = try server.api(token).raw("GET", base + "/messages", query: query)
        XCTAssertEqual(r.status, 200, String(decoding: r.body, as: UTF8.self))
        return try JSONDecoder().decode(MessagesPage.self, from: r.body).messages
    }

    func visibleInSQL(_ user: UUID) throws -> [String] {
        let conn = try PGConnection(conninfo: fixture.conninfo)
        return try conn.transaction(asUser: user) { tx in
            let r = try tx.query("SELECT message FROM staff_messages ORDER BY seq")
            return (0..<r.rowCount).compactMap { r.string($0, 0) }
        }
    }

    func testATeamMessageReachesMembersAndOrganisersOnlyEverywhere() throws {
        let member = try server.connect(fixture.staffToken)
        XCTAssertEqual(try member.subscribe(fixture.event).unread, 0)
        let nonMember = try server.subscriber(otherToken, fixture.event)
        let admin = try server.subscriber(fixture.adminToken, fixture.event)

        let owner = try server.connect(fixture.ownerToken)
        try owner.send(["op": "send", "ref": "t", "event_id": fixture.event.uuidString, "message": "Fight at gate 3",
                        "teams": ["Security"]])
        guard case .sent(_, let sent) = try owner.expect("sent") else { return XCTFail() }
        XCTAssertEqual(sent.teams, ["Security"])
        XCTAssertEqual(try member.expect("message").message?.id, sent.id)
        XCTAssertEqual(try admin.expect("message").message?.teams, ["Security"])
        // Then a message to everyone: the non-member's next frame is that one, never the first.
        let all = try JSONDecoder().decode(StaffMessage.self, from: try sendHTTP(fixture.ownerToken, ["message": "Gates open"]).body)
        XCTAssertEqual(try nonMember.expect("message").message?.id, all.id)
        XCTAssertEqual(try member.expect("message").message?.id, all.id)

        // History, catch-up and search over HTTP.
        XCTAssertEqual(try messages(fixture.staffToken).map(\.message), ["Fight at gate 3", "Gates open"])
        XCTAssertEqual(try messages(otherToken).map(\.message), ["Gates open"])
        XCTAssertEqual(try messages(otherToken, ["since_seq": "0"]).map(\.message), ["Gates open"])
        XCTAssertEqual(try messages(otherToken, ["q": "gate"]).map(\.message), ["Gates open"])
        XCTAssertEqual(try messages(fixture.staffToken, ["q": "fight"]).map(\.message), ["Fight at gate 3"])
        XCTAssertEqual(try messages(fixture.adminToken).count, 2)

        // Subscribe snapshots (history, catch-up, unread counts), one at a time and in a batch.
        for (token, expected): (String, [String]) in [(fixture.staffToken, ["Fight at gate 3", "Gates open"]), (otherToken, ["Gates open"])] {
            let s = try server.connect(token)
            let fresh = try s.subscribe(fixture.event)
            XCTAssertEqual(fresh.history.map(\.message), expected)
            XCTAssertEqual(fresh.unread, expected.count)
            let s2 = try server.connect(token)
            XCTAssertEqual(try s2.subscribe(fixture.event, sinceSeq: 0).history.map(\.message), expected)
        }
        // The WebSocket history op too.
        try nonMember.send(["op": "history", "ref": "h", "event_id": fixture.event.uuidString])
        guard case .history(_, _, let history, _) = try nonMember.expect("history") else { return XCTFail() }
        XCTAssertEqual(history.map(\.message), ["Gates open"])

        // A non-member cannot mark it read (it does not exist for them), a member can.
        XCTAssertEqual(try nonMember.expectError(["op": "mark_read", "message_id": sent.id.uuidString]).code, .notFound)
        try member.send(["op": "mark_read", "ref": "r", "message_id": sent.id.uuidString])
        guard case .read(_, _, _, let unread, _) = try member.expect("read") else { return XCTFail() }
        XCTAssertEqual(unread, 1)

        // Receipts and the escalation audience count the audience only.
        let receipts = try server.api(fixture.ownerToken).receipts(message: sent.id).list
        XCTAssertEqual(Set(receipts.readBy.map(\.userID)), [fixture.staff])
        XCTAssertEqual(Set(receipts.unreadBy.map(\.userID)), [fixture.admin], "the owner sent it; Nora is not in it")

        // Row-level security: as Nora in SQL, the message is not there.
        XCTAssertEqual(try visibleInSQL(other), ["Gates open"])
        XCTAssertEqual(try visibleInSQL(fixture.staff), ["Fight at gate 3", "Gates open"])
        XCTAssertEqual(try visibleInSQL(fixture.admin), ["Fight at gate 3", "Gates open"])
        XCTAssertEqual(try visibleInSQL(fixture.outsider), [])
        try nonMember.expectSilence(0.3)
    }

    func testTheAudienceIsFixedWhenSentAndEscalationFollowsIt() throws {
        let r = try sendHTTP(fixture.ownerToken, ["message": "Radio check", "teams": ["Security"], "message_type": "emergency"])
        XCTAssertEqual(r.status, 201, String(decoding: r.body, as: UTF8.self))
        let sent = try JSONDecoder().decode(StaffMessage.self, from: r.body)
        // Reminders go to the escalation's audience: the members and the organisers, not Nora.
        let audience = try fixture.store.conn.query("SELECT audience::text FROM escalations WHERE message_id = $1",
                                                    [sent.id.uuidString]).string(0, 0)
        XCTAssertEqual(Set(Store.uuidArrayForTests(audience)), [fixture.staff, fixture.admin])
        // Push and email (sql/012) reach the same people: staffcast_message_audience narrows to it.
        func pushAudience() throws -> Set<UUID> {
            let r = try fixture.store.conn.query("SELECT user_id FROM staffcast_message_audience($1)", [sent.id.uuidString])
            return Set((0..<r.rowCount).compactMap { r.uuid($0, 0) })
        }
        XCTAssertEqual(try pushAudience(), [fixture.staff, fixture.admin])

        // Membership changes afterwards do not change who it was for.
        try fixture.store.addTeamMember(as: fixture.owner, event: fixture.event, team: "Security", member: other)
        try fixture.store.removeTeamMember(as: fixture.owner, event: fixture.event, team: "Security", member: fixture.staff)
        XCTAssertEqual(try messages(otherToken).map(\.id), [])
        XCTAssertEqual(try messages(fixture.staffToken).map(\.id), [sent.id])
        XCTAssertEqual(try visibleInSQL(other), [])
        XCTAssertEqual(try pushAudience(), [fixture.staff, fixture.admin], "still Sam (it was for him), never Nora (she joined later)")
        // Even the team's deletion.
        try fixture.store.deleteTeam(as: fixture.owner, event: fixture.event, name: "Security")
        XCTAssertEqual(try messages(fixture.staffToken).map(\.teams), [["Security"]])
        XCTAssertEqual(try server.connect(fixture.staffToken).subscribe(fixture.event).unread, 1)
        XCTAssertEqual(try server.connect(otherToken).subscribe(fixture.event).unread, 0)
    }

    /// Receipts of a team message list as unread only those in its audience who still have
    /// access, as for a whole-event message and as escalation does (found from outside: a
    /// revoked member stayed "unread" for ever and `staffcast receipts --watch` never ended).
    func testReceiptsOfATeamMessageLeaveOutWhoLostAccess() throws {
        let reader = try fixture.person("Ada Reader"), revoked = try fixture.person("Ben Revoked")
        let deleted = try fixture.person("Cy Deleted")
        for p in [reader, revoked, deleted] {
            try fixture.store.addTeamMember(as: fixture.owner, event: fixture.event, team: "Security", member: p.id)
        }
        let r = try sendHTTP(fixture.ownerToken, ["message": "Gate 3?", "teams": ["Security"], "poll": ["options": ["Yes", "No"]]])
        XCTAssertEqual(r.status, 201, String(decoding: r.body, as: UTF8.self))
        let sent = try JSONDecoder().decode(StaffMessage.self, from: r.body)
        _ = try fixture.store.markRead(as: revoked.id, message: sent.id) // read, then lost access: still listed as read
        XCTAssertTrue(try fixture.store.revoke(event: fixture.event, user: revoked.id))
        _ = try fixture.store.deleteUser(deleted.id)
        XCTAssertTrue(try fixture.store.revoke(event: fixture.event, user: fixture.staff)) // unread, then lost access
        _ = try fixture.store.markRead(as: reader.id, message: sent.id)
        _ = try fixture.store.markRead(as: fixture.admin, message: sent.id) // organisers are in its audience too

        let receipts = try fixture.store.receipts(as: fixture.owner, message: sent.id)
        XCTAssertEqual(Set(receipts.readBy.map(\.displayName)), ["Ada Reader", "Adam Admin", "Ben Revoked"])
        XCTAssertEqual(receipts.unreadBy.map(\.displayName), [], "nobody left who may still read it: --watch ends")
        let csv = try server.api(fixture.ownerToken).raw("GET", "/v1/messages/\(sent.id.uuidString.lowercased())/receipts",
                                                        query: ["format": "csv"])
        XCTAssertEqual(csv.status, 200)
        let text = String(decoding: csv.body, as: UTF8.self)
        XCTAssertFalse(text.contains("Cy Deleted") || text.contains("Sam"), text)
        XCTAssertTrue(text.contains("Ada Reader") && text.contains("Ben Revoked"), text)
        // A poll counts its audience the same way (no Sam, no Cy; Ben read it, so he is still
        // listed, as a reader who lost access is for a poll to the whole event).
        XCTAssertEqual(try fixture.store.pollAnswers(as: fixture.owner, message: sent.id).unanswered.map(\.displayName),
                       ["Ada Reader", "Adam Admin", "Ben Revoked"])
    }

    func testAZoneMessageFollowsACheckIn() throws {
        for zone in ["Gate 1", "Gate 2"] {
            _ = try fixture.store.createTeam(as: fixture.owner, event: fixture.event, name: zone, kind: .zone)
        }
        try server.api(fixture.staffToken).checkIn(event: fixture.event, zone: "Gate 1")
        let staff = try server.subscriber(fixture.staffToken, fixture.event)
        // Gate 2 is empty: refused (AudienceCheck; it used to go out to no one).
        XCTAssertEqual(try sendHTTP(fixture.ownerToken, ["message": "Queue at gate 2", "teams": ["Gate 2"]]).status, 409)
        XCTAssertEqual(try sendHTTP(fixture.ownerToken, ["message": "Gate 1: water arrives", "teams": ["Gate 1"]]).status, 201)
        XCTAssertEqual(try staff.expect("message").message?.message, "Gate 1: water arrives", "not the Gate 2 message")
        try server.api(fixture.staffToken).checkIn(event: fixture.event, zone: "Gate 2")
        XCTAssertEqual(try sendHTTP(fixture.ownerToken, ["message": "Gate 1 again", "teams": ["Gate 1"]]).status, 409, "Gate 1 is empty now")
        XCTAssertEqual(try sendHTTP(fixture.ownerToken, ["message": "Gate 2: open lane 4", "teams": ["Gate 2"]]).status, 201)
        XCTAssertEqual(try staff.expect("message").message?.message, "Gate 2: open lane 4", "the next zone message follows them")
        XCTAssertEqual(try messages(fixture.staffToken).map(\.message), ["Gate 1: water arrives", "Gate 2: open lane 4"])
        // Reach for a zone counts its people and the organisers.
        let reach = try server.api(fixture.ownerToken).reach(event: fixture.event, teams: ["Gate 2"])
        XCTAssertEqual(reach.roster, 3, "Sam, the admin and the owner")
    }

    func testAnUnknownTeamIsNotFoundAndNothingIsStored() throws {
        let before = fixture.messageCount
        let owner = try server.connect(fixture.ownerToken)
        XCTAssertEqual(try owner.expectError(["op": "send", "event_id": fixture.event.uuidString, "message": "x",
                                              "teams": ["Security", "Nope"]]).code, .notFound)
        let r = try sendHTTP(fixture.ownerToken, ["message": "y", "teams": ["Nope"]])
        XCTAssertEqual(r.status, 404)
        XCTAssertTrue(String(decoding: r.body, as: UTF8.self).contains("Nope"))
        XCTAssertEqual(try sendHTTP(fixture.ownerToken, ["message": "z", "teams": ["a/b"]]).status, 400)
        // The plain-text form takes ?teams=a,b.
        let text = try server.api(fixture.ownerToken).raw("POST", base + "/messages", query: ["teams": "Security,Nope"],
                                                          body: Data("Plain text".utf8), contentType: "text/plain")
        XCTAssertEqual(text.status, 404)
        XCTAssertEqual(try sendHTTP(fixture.ownerToken, ["message": "z", "teams": "Security"]).status, 400)
        XCTAssertEqual(try sendHTTP(fixture.ownerToken, ["message": "later", "teams": ["Nope"],
                                                         "send_at": RFC3339.format(Date().addingTimeInterval(3600))]).status, 404)
        XCTAssertEqual(fixture.messageCount, before)
        XCTAssertEqual(try fixture.count("SELECT count(*) FROM scheduled_messages"), 0)
        XCTAssertEqual(try fixture.count("SELECT count(*) FROM message_audience"), 0)
        // Sends that arrive together: the one naming an unknown team fails alone.
        for (i, teams) in [["Security"], ["Nope"], []].enumerated() {
            try owner.send(["op": "send", "ref": "b\(i)", "event_id": fixture.event.uuidString, "message": "batch \(i)", "teams": teams])
        }
        var outcomes: [String: String] = [:]
        while outcomes.count < 3 {
            let frame = try owner.next()
            if let ref = frame.ref { outcomes[ref] = frame.op }
        }
        XCTAssertEqual(outcomes, ["b0": "sent", "b1": "error", "b2": "sent"])
        XCTAssertEqual(fixture.messageCount, before + 2)
        let plain = try server.api(fixture.ownerToken).raw("POST", base + "/messages", query: ["teams": "Security"],
                                                           body: Data("Plain text to Security".utf8), contentType: "text/plain")
        XCTAssertEqual(plain.status, 201, String(decoding: plain.body, as: UTF8.self))
        XCTAssertEqual(try JSONDecoder().decode(StaffMessage.self, from: plain.body).teams, ["Security"])
    }

    func testTemplatesScheduledSendsAndTheCommandLineCarryTeams() throws {
        var r = try server.api(fixture.ownerToken).raw("POST", base + "/templates", body: try JSONSerialization.data(withJSONObject:
            ["name": "radio", "message": "Radio check, Security", "teams": ["Security"]]), contentType: "application/json")
        XCTAssertEqual(r.status, 201, String(decoding: r.body, as: UTF8.self))
        r = try sendHTTP(fixture.ownerToken, ["template": "radio"])
        XCTAssertEqual(try JSONDecoder().decode(StaffMessage.self, from: r.body).teams, ["Security"], "the template's teams")
        r = try sendHTTP(fixture.ownerToken, ["message": "Later, Security", "teams": ["Security"],
                                              "send_at": RFC3339.format(Date().addingTimeInterval(3600))])
        XCTAssertEqual(r.status, 202)
        XCTAssertEqual(try JSONDecoder().decode(ScheduledMessage.self, from: r.body).teams, ["Security"])
        // Due now: the scheduler sends it to the team.
        try fixture.store.conn.query("UPDATE scheduled_messages SET send_at = now() - interval '1 second'")
        _ = try fixture.store.dispatchDueScheduled()
        XCTAssertEqual(try messages(fixture.staffToken).map(\.message), ["Radio check, Security", "Later, Security"])
        XCTAssertEqual(try messages(otherToken).map(\.message), [])

        let id = fixture.event.uuidString.lowercased()
        let cli = try CommandLineTests.execute(["send", "--event", id, "--team", "Security", "--team", "Security", "Via the CLI"],
                                               env: ["STAFFCAST_SERVER": server.http, "STAFFCAST_TOKEN": fixture.ownerToken,
                                                     "HOME": NSTemporaryDirectory()])
        XCTAssertEqual(cli.status, 0, cli.stderr)
        XCTAssertTrue(cli.stderr.contains("of 2 recipients"), "the delivery line counts the audience: \(cli.stderr)")
        let bad = try CommandLineTests.execute(["send", "--event", id, "--team", "Nope", "Nobody"],
                                               env: ["STAFFCAST_SERVER": server.http, "STAFFCAST_TOKEN": fixture.ownerToken,
                                                     "HOME": NSTemporaryDirectory()])
        XCTAssertEqual(bad.status, 2, "not found: exit 2 (the CLI convention)")
        XCTAssertTrue(bad.stderr.contains("no team or zone named 'Nope'"), bad.stderr)
        XCTAssertEqual(try messages(otherToken).map(\.message), [])
    }

    /// A send to teams with no one in them apart from the sender is refused (conflict, naming
    /// them; nothing stored) over HTTP, the WebSocket (alone in a batch) and the CLI. It used to
    /// go out as a success reaching nobody ("delivered live to 0 of 0 recipients").
    func testASendToEmptyTeamsIsRefused() throws {
        let before = fixture.messageCount
        _ = try fixture.store.createTeam(as: fixture.owner, event: fixture.event, name: "Medics", kind: .team)
        _ = try fixture.store.createTeam(as: fixture.owner, event: fixture.event, name: "Gate 9", kind: .zone)
        try fixture.store.addTeamMember(as: fixture.owner, event: fixture.event, team: "Medics", member: fixture.owner) // the sender only
        let r = try sendHTTP(fixture.ownerToken, ["message": "EVACUATE medic tent", "teams": ["Medics", "Gate 9"],
                                                  "message_type": "emergency"])
        XCTAssertEqual(r.status, 409, String(decoding: r.body, as: UTF8.self))
        XCTAssertTrue(String(decoding: r.body, as: UTF8.self).contains("No one is in 'Medics' or 'Gate 9' apart from you"),
                      String(decoding: r.body, as: UTF8.self))
        let owner = try server.connect(fixture.ownerToken)
        let (sent, refused) = try owner.sendBatch([["Medics"], ["Security"], ["Medics", "Security"]].enumerated().map { i, teams in
            ["op": "send", "ref": "e\(i)", "event_id": fixture.event.uuidString, "message": "batch \(i)", "teams": teams]
        })
        XCTAssertEqual(sent, ["e1", "e2"], "a team with someone in it makes the audience")
        XCTAssertEqual(refused, ["e0": .conflict])
        XCTAssertEqual(fixture.messageCount, before + 2)
        let cli = try CommandLineTests.execute(["send", "--event", fixture.event.uuidString.lowercased(), "--team", "Medics", "Anyone?"],
                                               env: ["STAFFCAST_SERVER": server.http, "STAFFCAST_TOKEN": fixture.ownerToken,
                                                     "HOME": NSTemporaryDirectory()])
        XCTAssertNotEqual(cli.status, 0)
        XCTAssertTrue(cli.stderr.contains("No one is in 'Medics'"), cli.stderr)
        XCTAssertEqual(fixture.messageCount, before + 2)
    }

    /// `teams` absent: the template's audience; `teams: []` given: the whole event, over the
    /// template's teams (HTTP JSON, WebSocket, plain text alike). It used to go to the template's.
    func testAnExplicitWholeEventOverridesTheTemplatesTeams() throws {
        var r = try server.api(fixture.ownerToken).raw("POST", base + "/templates", body: try JSONSerialization.data(withJSONObject:
            ["name": "sec", "message": "Radio check, Security", "teams": ["Security"]]), contentType: "application/json")
        XCTAssertEqual(r.status, 201, String(decoding: r.body, as: UTF8.self))
        r = try sendHTTP(fixture.ownerToken, ["template": "sec", "teams": [String](), "force": true])
        XCTAssertEqual(r.status, 201, String(decoding: r.body, as: UTF8.self))
        XCTAssertEqual(try JSONDecoder().decode(StaffMessage.self, from: r.body).teams, [], "an explicit whole event")
        let owner = try server.connect(fixture.ownerToken)
        try owner.send(["op": "send", "event_id": fixture.event.uuidString, "template": "sec", "teams": [String](), "force": true])
        guard case .sent(_, let viaSocket) = try owner.expect("sent") else { return XCTFail() }
        XCTAssertEqual(viaSocket.teams, [])
        let plain = try server.api(fixture.ownerToken).raw("POST", base + "/messages", query: ["template": "sec", "teams": "", "force": "true"],
                                                           body: Data(), contentType: "text/plain")
        XCTAssertEqual(plain.status, 201, String(decoding: plain.body, as: UTF8.self))
        XCTAssertEqual(try JSONDecoder().decode(StaffMessage.self, from: plain.body).teams, [])
        XCTAssertEqual(try messages(otherToken).count, 3, "Nora, outside Security, has all three")
        // Absent: the template's teams.
        r = try sendHTTP(fixture.ownerToken, ["template": "sec", "force": true])
        XCTAssertEqual(try JSONDecoder().decode(StaffMessage.self, from: r.body).teams, ["Security"])
        XCTAssertEqual(try messages(otherToken).count, 3)
    }
}

extension Store {
    /// `uuidArray` for the tests (it is internal to the store).
    static func uuidArrayForTests(_ text: String?) -> [UUID] {
        guard let text else { return [] }
        return text.trimmingCharacters(in: CharacterSet(charactersIn: "{}")).split(separator: ",").compactMap { UUID(uuidString: String($0)) }
    }
}
