import Foundation
import StaffcastClient
import StaffcastCore
import StaffcastPostgres
import XCTest

/// Scheduled sends and reminders (docs/protocol.md) through the WebSocket protocol and
/// HTTP, with their access rules; exactly once with two servers; late after every server was down.
final class ScheduledSendTests: IntegrationTestCase {
    func start() throws -> TestServer {
        try startServer()
    }

    var eventID: String { fixture.event.uuidString.lowercased() }
    func inSeconds(_ s: Double) -> String { RFC3339.format(Date().addingTimeInterval(s)) }

    func post(_ server: TestServer, _ token: String, _ body: [String: Any], event: UUID? = nil) throws -> APIClient.Response {
        try server.api(token).raw("POST", "/v1/events/\((event ?? fixture.event).uuidString.lowercased())/messages",
                                  body: try JSONSerialization.data(withJSONObject: body), contentType: "application/json")
    }

    func errorCode(_ r: APIClient.Response) -> String? {
        ((try? JSONSerialization.jsonObject(with: r.body)) as? [String: Any]).flatMap { ($0["error"] as? [String: Any])?["code"] as? String }
    }

    func testScheduledOverWebSocketIsAnsweredThenSentAtItsTime() throws {
        let server = try start()
        let staff = try server.subscriber(fixture.staffToken, fixture.event)
        let owner = try server.connect(fixture.ownerToken)
        try owner.send(["op": "send", "ref": "s1", "event_id": eventID, "message": "Doors open soon", "priority": "high",
                        "send_at": inSeconds(2)])
        guard case .scheduled(let ref, let scheduled) = try owner.expect("scheduled") else { return XCTFail("no scheduled") }
        XCTAssertEqual(ref, "s1")
        XCTAssertEqual(scheduled.status, .pending)
        XCTAssertNil(scheduled.messageID)
        XCTAssertEqual(scheduled.priority, .high)
        XCTAssertEqual(fixture.messageCount, 0, "nothing is sent before its time")
        let live = try XCTUnwrap(try staff.expect("message", timeout: 10).message)
        XCTAssertEqual(live.message, "Doors open soon")
        XCTAssertEqual(live.senderID, fixture.owner)
        XCTAssertGreaterThanOrEqual(live.sentAt.timeIntervalSince(scheduled.sendAt), -0.5)
        let list = try server.api(fixture.adminToken).scheduled(event: fixture.event)
        XCTAssertEqual(list.count, 1)
        XCTAssertEqual(list.first?.status, .sent)
        XCTAssertEqual(list.first?.messageID, live.id)
        XCTAssertEqual(list.first?.late, false)
    }

    func testHTTPAnswers202ListsAndCancels() throws {
        let server = try start()
        let r = try post(server, fixture.adminToken, ["message": "Briefing", "send_at": inSeconds(3_600), "expires_in_minutes": 30])
        XCTAssertEqual(r.status, 202, String(decoding: r.body, as: UTF8.self))
        let scheduled = try JSONDecoder().decode(ScheduledMessage.self, from: r.body)
        XCTAssertEqual(scheduled.expiresInMinutes, 30)
        let api = try server.api(fixture.ownerToken)
        XCTAssertEqual(try api.scheduled(event: fixture.event).map(\.id), [scheduled.id])
        let cancelled = try api.cancelScheduled(scheduled.id)
        XCTAssertEqual(cancelled.status, .cancelled)
        XCTAssertEqual(try api.scheduled(event: fixture.event).first?.status, .cancelled)
        // Cancelling again is harmless; an unknown id is not found.
        XCTAssertEqual(try api.cancelScheduled(scheduled.id).status, .cancelled)
        XCTAssertEqual(try api.raw("DELETE", "/v1/scheduled/\(UUID().uuidString)").status, 404)
    }

    func testCancelledNeverGoesOut() throws {
        let server = try start()
        let r = try post(server, fixture.ownerToken, ["message": "Not needed", "send_at": inSeconds(2)])
        XCTAssertEqual(r.status, 202)
        let scheduled = try JSONDecoder().decode(ScheduledMessage.self, from: r.body)
        _ = try server.api(fixture.ownerToken).cancelScheduled(scheduled.id)
        // A witness due just after it: once the witness went out, the cancelled one's time has passed.
        XCTAssertEqual(try post(server, fixture.ownerToken, ["message": "Witness", "send_at": inSeconds(2.5)]).status, 202)
        XCTAssertTrue(waitUntil(10) { fixture.messageCount > 0 }, "the witness never went out")
        XCTAssertEqual(try fixture.count("SELECT count(*) FROM staff_messages WHERE message = 'Not needed'"), 0)
        XCTAssertEqual(fixture.messageCount, 1)
    }

    func testBeforeStartNeedsAStartAndTheFutureIsRequired() throws {
        let server = try start()
        // The fixture's event has no starts_at.
        var r = try post(server, fixture.ownerToken, ["message": "x", "before_start": "2h"])
        XCTAssertEqual(r.status, 400)
        XCTAssertTrue(String(decoding: r.body, as: UTF8.self).contains("start time"))
        r = try post(server, fixture.ownerToken, ["message": "x", "send_at": inSeconds(-60)])
        XCTAssertEqual(r.status, 400)
        XCTAssertTrue(String(decoding: r.body, as: UTF8.self).contains("already passed"))
        r = try post(server, fixture.ownerToken, ["message": "x", "before_start": "2x"])
        XCTAssertEqual(r.status, 400)

        // An event starting in three hours: 2h before is fine, 1d before has passed.
        let starts = Date().addingTimeInterval(3 * 3_600)
        let event = try fixture.store.createEvent(name: "Evening shift", startsAt: starts)
        try fixture.store.grant(event: event, user: fixture.owner, level: .owner)
        r = try post(server, fixture.ownerToken, ["message": "Shift in 2h", "before_start": "2h"], event: event)
        XCTAssertEqual(r.status, 202, String(decoding: r.body, as: UTF8.self))
        let s = try JSONDecoder().decode(ScheduledMessage.self, from: r.body)
        XCTAssertEqual(s.sendAt.timeIntervalSince1970, starts.addingTimeInterval(-7_200).timeIntervalSince1970, accuracy: 0.01)
        r = try post(server, fixture.ownerToken, ["message": "Shift tomorrow", "before_start": "1d"], event: event)
        XCTAssertEqual(r.status, 400)
        // The WebSocket says the same.
        let owner = try server.connect(fixture.ownerToken)
        let e = try owner.expectError(["op": "send", "event_id": eventID, "message": "x", "before_start": "30m"])
        XCTAssertEqual(e.code, .invalid)
        XCTAssertEqual(try fixture.count("SELECT count(*) FROM scheduled_messages"), 1)
    }

    func testOnlyAdminsAndOwnersScheduleListAndCancel() throws {
        let other = try fixture.store.createEvent(name: "Other", startsAt: nil)
        let otherToken = try fixture.person("Other Owner", level: .owner, event: other).token
        let server = try start()
        let staff = try server.connect(fixture.staffToken)
        XCTAssertEqual(try staff.expectError(["op": "send", "event_id": eventID, "message": "x", "send_at": inSeconds(600)]).code, .forbidden)
        XCTAssertEqual(try post(server, fixture.staffToken, ["message": "x", "send_at": inSeconds(600)]).status, 403)
        XCTAssertEqual(try post(server, fixture.outsiderToken, ["message": "x", "send_at": inSeconds(600)]).status, 404,
                       "an event one cannot see is answered as a missing one")
        let r = try post(server, fixture.ownerToken, ["message": "Owner's", "send_at": inSeconds(600)])
        let s = try JSONDecoder().decode(ScheduledMessage.self, from: r.body)
        // Staff see the event but not its scheduled sends; outsiders see neither. A scheduled
        // send one cannot see is answered exactly like one that does not exist.
        XCTAssertEqual(try server.api(fixture.staffToken).raw("GET", "/v1/events/\(eventID)/scheduled").status, 403)
        XCTAssertEqual(try server.api(fixture.outsiderToken).raw("GET", "/v1/events/\(eventID)/scheduled").status, 404)
        let missing = try server.api(fixture.ownerToken).raw("DELETE", "/v1/scheduled/\(UUID().uuidString)")
        for token in [fixture.staffToken, fixture.outsiderToken] {
            let cancel = try server.api(token).raw("DELETE", "/v1/scheduled/\(s.id.uuidString)")
            XCTAssertEqual(cancel.status, 404, token)
            XCTAssertEqual(cancel.body, missing.body)
        }
        XCTAssertEqual(try fixture.count("SELECT count(*) FROM scheduled_messages WHERE status = 'pending'"), 1)
        // Another event's organiser sees none of it.
        XCTAssertEqual(try server.api(otherToken).raw("GET", "/v1/events/\(eventID)/scheduled").status, 404)
        XCTAssertEqual(try server.api(otherToken).raw("DELETE", "/v1/scheduled/\(s.id.uuidString)").status, 404)
    }

    func testTwoServersSendEachExactlyOnce() throws {
        let a = try start()
        let b = try start()
        let staff = try a.subscriber(fixture.staffToken, fixture.event)
        let when = inSeconds(2.5)
        let n = 20
        for i in 0..<n {
            let r = try post(i % 2 == 0 ? a : b, fixture.ownerToken, ["message": "reminder \(i)", "send_at": when])
            XCTAssertEqual(r.status, 202)
        }
        var seen: [String: Int] = [:]
        for _ in 0..<n {
            let m = try XCTUnwrap(try staff.expect("message", timeout: 15).message)
            seen[m.message, default: 0] += 1
        }
        try staff.expectSilence(2.5)
        XCTAssertEqual(seen.count, n)
        XCTAssertTrue(seen.values.allSatisfy { $0 == 1 }, "\(seen)")
        XCTAssertEqual(fixture.messageCount, n)
        XCTAssertEqual(try fixture.count("SELECT count(DISTINCT message_id) FROM scheduled_messages WHERE status = 'sent'"), n)
    }

    func testSentLateAfterEveryServerWasDown() throws {
        var server = try start()
        let r = try post(server, fixture.ownerToken, ["message": "While we were down", "send_at": inSeconds(3)])
        XCTAssertEqual(r.status, 202)
        server.stop()
        // Every server was down at its time, and stays down for a while past it (moved into the past).
        try fixture.store.conn.execute("UPDATE scheduled_messages SET send_at = send_at - interval '10 minutes'")
        XCTAssertEqual(fixture.messageCount, 0)
        server = try start()
        let staff = try server.connect(fixture.staffToken)
        let history = try staff.subscribe(fixture.event).history // may already hold it
        waitUntil(10) { fixture.messageCount > 0 }
        XCTAssertEqual(fixture.messageCount, 1)
        let list = try server.api(fixture.ownerToken).scheduled(event: fixture.event)
        XCTAssertEqual(list.first?.status, .sent)
        XCTAssertEqual(list.first?.late, true)
        // Staff see it once: in the history or live, and nothing more within 2 s.
        var seen = history.filter { $0.message == "While we were down" }.count
        while let frame = try staff.nextOrNil(timeout: 2) {
            if frame.message?.message == "While we were down" { seen += 1 }
        }
        XCTAssertEqual(seen, 1)
        XCTAssertEqual(fixture.messageCount, 1, "sent once")
    }

    func testASenderWhoLostAccessSendsNothing() throws {
        let server = try start()
        let r = try post(server, fixture.adminToken, ["message": "From a former admin", "send_at": inSeconds(2)])
        XCTAssertEqual(r.status, 202)
        _ = try fixture.store.revoke(event: fixture.event, user: fixture.admin)
        // Dropped (with a note) when it falls due: after that it can never go out.
        XCTAssertTrue(try waitUntil(10) {
            try fixture.count("SELECT count(*) FROM scheduled_messages WHERE status = 'cancelled' AND note IS NOT NULL") == 1
        })
        XCTAssertEqual(fixture.messageCount, 0)
    }

    /// A scheduled send whose team was deleted (even if one of that name was made again, empty)
    /// or emptied before its time is cancelled with a note naming it; it used to be marked sent,
    /// reaching nobody. One whose team still holds someone goes out.
    func testAScheduledSendToADeletedOrEmptiedTeamIsCancelledWithANote() throws {
        let server = try start()
        for name in ["Later", "Gone", "Keep"] {
            _ = try fixture.store.createTeam(as: fixture.owner, event: fixture.event, name: name, kind: .team)
            try fixture.store.addTeamMember(as: fixture.owner, event: fixture.event, team: name, member: fixture.staff)
        }
        for (text, team) in [("To Later", "Later"), ("To Gone", "Gone"), ("To Keep", "Keep")] {
            XCTAssertEqual(try post(server, fixture.ownerToken, ["message": text, "teams": [team], "send_at": inSeconds(3600)]).status, 202)
        }
        try fixture.store.deleteTeam(as: fixture.owner, event: fixture.event, name: "Later")
        _ = try fixture.store.createTeam(as: fixture.owner, event: fixture.event, name: "Later", kind: .team) // same name, empty
        try fixture.store.removeTeamMember(as: fixture.owner, event: fixture.event, team: "Gone", member: fixture.staff)
        try fixture.store.conn.query("UPDATE scheduled_messages SET send_at = now() - interval '1 second'")
        _ = try fixture.store.dispatchDueScheduled() // (or the server's scheduler, whichever claims them first)
        XCTAssertTrue(try waitUntil(10) { try fixture.count("SELECT count(*) FROM scheduled_messages WHERE status = 'pending'") == 0 })
        let listed = try server.api(fixture.ownerToken).scheduled(event: fixture.event)
        let byText = Dictionary(uniqueKeysWithValues: listed.map { ($0.message, $0) })
        XCTAssertEqual(byText["To Later"]?.status, .cancelled)
        XCTAssertEqual(byText["To Later"]?.note, "not sent: no one was in 'Later' apart from the sender at its time")
        XCTAssertEqual(byText["To Gone"]?.status, .cancelled)
        XCTAssertEqual(byText["To Gone"]?.note, "not sent: no one was in 'Gone' apart from the sender at its time")
        XCTAssertNil(byText["To Gone"]?.messageID)
        XCTAssertEqual(byText["To Keep"]?.status, .sent)
        XCTAssertEqual(fixture.messageCount, 1)
        // A deleted team (none of that name now): the note says so; `staffcast scheduled list` shows it.
        XCTAssertEqual(try post(server, fixture.ownerToken, ["message": "To Keep again", "teams": ["Keep"], "send_at": inSeconds(3600)]).status, 202)
        try fixture.store.deleteTeam(as: fixture.owner, event: fixture.event, name: "Keep")
        try fixture.store.conn.query("UPDATE scheduled_messages SET send_at = now() - interval '1 second' WHERE status = 'pending'")
        _ = try fixture.store.dispatchDueScheduled()
        XCTAssertTrue(try waitUntil(10) { try fixture.count("SELECT count(*) FROM scheduled_messages WHERE status = 'pending'") == 0 })
        XCTAssertEqual(try server.api(fixture.ownerToken).scheduled(event: fixture.event).first { $0.message == "To Keep again" }?.note,
                       "not sent: 'Keep' no longer exists in this event")
        let cli = try CommandLineTests.execute(["scheduled", "list", "--event", eventID],
                                               env: ["STAFFCAST_SERVER": server.http, "STAFFCAST_TOKEN": fixture.ownerToken,
                                                     "HOME": NSTemporaryDirectory()])
        XCTAssertEqual(cli.status, 0, cli.stderr)
        XCTAssertTrue(cli.stdout.contains("'Keep' no longer exists"), cli.stdout)
        XCTAssertEqual(fixture.messageCount, 1)
    }
}
