import Foundation
import StaffcastClient
@testable import StaffcastCore
import StaffcastPostgres
import XCTest

/// Teams and zones (docs/protocol.md, Audiences) over real HTTP against real PostgreSQL: who
/// may manage them, one zone per person (also in SQL), check-ins, reach per zone, the audit
/// log and the command line.
final class TeamsTests: IntegrationTestCase {
    override class var startsServer: Bool { true }

    var base: String { "/v1/events/\(fixture.event.uuidString.lowercased())" }

    func post(_ token: String, _ path: String, _ body: [String: Any]? = nil) throws -> APIClient.Response {
        try server.api(token).raw("POST", base + path, body: try body.map { try JSONSerialization.data(withJSONObject: $0) },
                                  contentType: body == nil ? nil : "application/json")
    }

    func member(_ method: String, _ token: String, team: String, user: UUID) throws -> Int {
        try server.api(token).raw(method, base + "/teams/\(APIClient.segment(team))/members/\(user.uuidString.lowercased())").status
    }

    func testManageTeamsAndWhoMay() throws {
        var r = try post(fixture.adminToken, "/teams", ["name": "Security"])
        XCTAssertEqual(r.status, 201, String(decoding: r.body, as: UTF8.self))
        let team = try JSONDecoder().decode(Team.self, from: r.body)
        XCTAssertEqual(team, Team(name: "Security", eventID: fixture.event, kind: .team, members: 0))
        r = try post(fixture.ownerToken, "/teams", ["name": "Gate 3", "kind": "zone"])
        XCTAssertEqual(r.status, 201)
        XCTAssertEqual(try post(fixture.ownerToken, "/teams", ["name": "Security"]).status, 409)
        XCTAssertEqual(try post(fixture.ownerToken, "/teams", ["name": "a/b"]).status, 400)
        XCTAssertEqual(try post(fixture.ownerToken, "/teams", ["name": "x", "kind": "squad"]).status, 400)
        XCTAssertEqual(try post(fixture.staffToken, "/teams", ["name": "Mine"]).status, 403)
        XCTAssertEqual(try post(fixture.outsiderToken, "/teams", ["name": "Mine"]).status, 404)

        XCTAssertEqual(try member("PUT", fixture.adminToken, team: "Security", user: fixture.staff), 201)
        XCTAssertEqual(try member("PUT", fixture.adminToken, team: "Security", user: fixture.staff), 200, "idempotent")
        XCTAssertEqual(try member("PUT", fixture.adminToken, team: "Security", user: fixture.outsider), 404, "no access")
        XCTAssertEqual(try member("PUT", fixture.adminToken, team: "Nope", user: fixture.staff), 404)
        XCTAssertEqual(try member("PUT", fixture.staffToken, team: "Security", user: fixture.staff), 403)
        XCTAssertEqual(try server.api(fixture.ownerToken).teamMembers(event: fixture.event, team: "Security"),
                       [TeamMember(userID: fixture.staff, displayName: "Sam Staff")])
        XCTAssertEqual(try server.api(fixture.staffToken).raw("GET", base + "/teams/Security/members").status, 403)
        let teams = try server.api(fixture.ownerToken).teams(event: fixture.event)
        XCTAssertEqual(teams.map(\.name), ["Security", "Gate 3"])
        XCTAssertEqual(teams.map(\.members), [1, 0])
        // Staff see the names (to check into zones); outsiders nothing.
        XCTAssertEqual(try server.api(fixture.staffToken).teams(event: fixture.event).count, 2)
        XCTAssertEqual(try server.api(fixture.outsiderToken).raw("GET", base + "/teams").status, 404)

        XCTAssertEqual(try member("DELETE", fixture.adminToken, team: "Security", user: fixture.staff), 200)
        XCTAssertEqual(try member("DELETE", fixture.adminToken, team: "Security", user: fixture.staff), 404)
        XCTAssertEqual(try server.api(fixture.staffToken).raw("DELETE", base + "/teams/Security").status, 403)
        try server.api(fixture.ownerToken).deleteTeam(event: fixture.event, name: "Security")
        XCTAssertEqual(try server.api(fixture.ownerToken).raw("DELETE", base + "/teams/Security").status, 404)
        XCTAssertEqual(try server.api(fixture.ownerToken).teams(event: fixture.event).map(\.name), ["Gate 3"])

        let actions = try fixture.store.auditLog(limit: 50, event: fixture.event).map(\.action)
        XCTAssertEqual(actions.filter { $0 == "team_create" }.count, 2, "\(actions)")
        XCTAssertTrue(actions.contains("team_add") && actions.contains("team_remove") && actions.contains("team_delete"), "\(actions)")
    }

    func testZoneCheckInMovesAPersonAndReachCountsZones() throws {
        for name in ["Gate 1", "Gate 2"] { XCTAssertEqual(try post(fixture.ownerToken, "/teams", ["name": name, "kind": "zone"]).status, 201) }
        XCTAssertEqual(try post(fixture.ownerToken, "/teams", ["name": "Security"]).status, 201)
        XCTAssertEqual(try post(fixture.staffToken, "/zones/Gate 1/checkin").status, 200)
        XCTAssertEqual(try post(fixture.staffToken, "/zones/Security/checkin").status, 400, "a team is not a zone")
        XCTAssertEqual(try post(fixture.staffToken, "/zones/Nope/checkin").status, 404)
        XCTAssertEqual(try post(fixture.outsiderToken, "/zones/Gate 1/checkin").status, 404)
        func zoneOf(_ user: UUID) throws -> [String] {
            try ["Gate 1", "Gate 2"].filter { zone in
                try server.api(fixture.ownerToken).teamMembers(event: fixture.event, team: zone).contains { $0.userID == user }
            }
        }
        XCTAssertEqual(try zoneOf(fixture.staff), ["Gate 1"])
        try server.api(fixture.staffToken).checkIn(event: fixture.event, zone: "Gate 2")
        XCTAssertEqual(try zoneOf(fixture.staff), ["Gate 2"], "a check-in moves the person out of their previous zone")
        // An organiser adding someone to a zone moves them too.
        XCTAssertEqual(try member("PUT", fixture.adminToken, team: "Gate 1", user: fixture.staff), 201)
        XCTAssertEqual(try zoneOf(fixture.staff), ["Gate 1"])

        // The database holds the rule whoever writes: a second zone row for the same person fails.
        XCTAssertThrowsError(try fixture.store.conn.query("""
            INSERT INTO team_members (event_id, team_name, kind, user_id) VALUES ($1, 'Gate 2', 'zone', $2)
            """, [fixture.event.uuidString, fixture.staff.uuidString])) { error in
            XCTAssertEqual((error as? PostgresError)?.sqlState, "23505", "\(error)")
        }
        // Staff cannot write memberships directly under row-level security.
        let conn = try PGConnection(conninfo: fixture.conninfo)
        XCTAssertThrowsError(try conn.transaction(asUser: fixture.staff) {
            try $0.query("INSERT INTO team_members (event_id, team_name, kind, user_id) VALUES ($1, 'Security', 'team', $2)",
                         [fixture.event.uuidString, fixture.staff.uuidString])
        }) { XCTAssertEqual(($0 as? PostgresError)?.sqlState, "42501", "\($0)") }

        // Reach shows each zone's members and who of them is connected.
        let staff = try server.subscriber(fixture.staffToken, fixture.event)
        var reach = try server.api(fixture.ownerToken).reach(event: fixture.event)
        try waitUntil(5) {
            reach = try server.api(fixture.ownerToken).reach(event: fixture.event)
            return reach.zones.first(where: { $0.name == "Gate 1" })?.connected == 1
        }
        XCTAssertEqual(reach.zones, [Reach.Zone(name: "Gate 1", members: 1, connected: 1), Reach.Zone(name: "Gate 2", members: 0, connected: 0)])

        // Access ends: so do the memberships.
        try fixture.store.revoke(event: fixture.event, user: fixture.staff)
        XCTAssertEqual(try fixture.count("SELECT count(*) FROM team_members"), 0)
        let actions = try fixture.store.auditLog(limit: 50, event: fixture.event).map(\.action)
        XCTAssertEqual(actions.filter { $0 == "zone_checkin" }.count, 2, "\(actions)")
    }

    /// Look-alike names are one name (normalized, compared ignoring case) or refused; any
    /// spelling finds the team. They used to be separate teams.
    func testLookAlikeNamesAreOneTeamOrRefused() throws {
        func create(_ name: String, kind: String = "team") throws -> APIClient.Response {
            try post(fixture.ownerToken, "/teams", ["name": name, "kind": kind])
        }
        var r = try create("Caf\u{E9}")
        XCTAssertEqual(r.status, 201, String(decoding: r.body, as: UTF8.self))
        XCTAssertEqual(try create("Security").status, 201)
        XCTAssertEqual(try create("Gate 3", kind: "zone").status, 201)
        for (name, existing) in [("Cafe\u{301}", "Caf\u{E9}"), ("security", "Security"), ("Gate\u{A0}3", "Gate 3"),
                                 (" SECURITY  ", "Security"), ("gate  3", "Gate 3")] {
            r = try create(name)
            XCTAssertEqual(r.status, 409, name)
            XCTAssertTrue(String(decoding: r.body, as: UTF8.self).contains("named '\(existing)'"), String(decoding: r.body, as: UTF8.self))
        }
        r = try create("Secu\u{200B}rity")
        XCTAssertEqual(r.status, 400)
        XCTAssertTrue(String(decoding: r.body, as: UTF8.self).contains("U+200B"), String(decoding: r.body, as: UTF8.self))
        XCTAssertEqual(try create("\u{405}ecurity").status, 201, "Cyrillic is a script of its own, not a look-alike trick to refuse")
        r = try create("  Medics\u{A0}Tent ")
        XCTAssertEqual(try JSONDecoder().decode(Team.self, from: r.body).name, "Medics Tent", "stored normalized")
        XCTAssertEqual(try server.api(fixture.ownerToken).teams(event: fixture.event).count, 5)
        // Any spelling finds the team: member add, send, check-in.
        XCTAssertEqual(try member("PUT", fixture.ownerToken, team: "Cafe\u{301}", user: fixture.staff), 201)
        XCTAssertEqual(try server.api(fixture.ownerToken).teamMembers(event: fixture.event, team: "Caf\u{E9}").map(\.userID), [fixture.staff])
        let sent = try server.api(fixture.ownerToken).raw("POST", base + "/messages", body: try JSONSerialization.data(withJSONObject:
            ["message": "Coffee is ready", "teams": ["Cafe\u{301}"]]), contentType: "application/json")
        XCTAssertEqual(sent.status, 201, String(decoding: sent.body, as: UTF8.self))
        XCTAssertEqual(try JSONDecoder().decode(StaffMessage.self, from: sent.body).teams, ["Caf\u{E9}"])
        try server.api(fixture.staffToken).checkIn(event: fixture.event, zone: "Gate\u{A0}3")
        XCTAssertEqual(try server.api(fixture.ownerToken).teamMembers(event: fixture.event, team: "Gate 3").map(\.userID), [fixture.staff])

        // A spelling refused as taken ("security" beside "Security") also finds the team (the
        // attack round: 409 "case does not matter", then 404 for a send to "security").
        XCTAssertEqual(try member("PUT", fixture.ownerToken, team: "SECURITY", user: fixture.staff), 201)
        XCTAssertEqual(try server.api(fixture.ownerToken).teamMembers(event: fixture.event, team: "security").map(\.userID), [fixture.staff])
        let reach = try server.api(fixture.ownerToken).raw("GET", base + "/reach", query: ["teams": "security"])
        XCTAssertEqual(reach.status, 200, String(decoding: reach.body, as: UTF8.self))
        let staff = try server.subscriber(fixture.staffToken, fixture.event)
        let toSecurity = try server.api(fixture.ownerToken).raw("POST", base + "/messages", body: try JSONSerialization.data(withJSONObject:
            ["message": "Bag check at gate 2", "teams": ["security", "Security"]]), contentType: "application/json")
        XCTAssertEqual(toSecurity.status, 201, String(decoding: toSecurity.body, as: UTF8.self))
        XCTAssertEqual(try JSONDecoder().decode(StaffMessage.self, from: toSecurity.body).teams, ["Security"], "stored as the team is named")
        guard case .message(let live) = try staff.expect("message") else { return XCTFail() }
        XCTAssertEqual(live.message, "Bag check at gate 2")
        try server.api(fixture.staffToken).checkIn(event: fixture.event, zone: "GATE 3")
        let missing = try server.api(fixture.ownerToken).raw("GET", base + "/reach", query: ["teams": "Securitee"])
        XCTAssertEqual(missing.status, 404)
        XCTAssertFalse(String(decoding: missing.body, as: UTF8.self).contains("nothing was sent"), "a reach sends nothing")
        XCTAssertEqual(try member("DELETE", fixture.ownerToken, team: "security", user: fixture.staff), 200)
    }

    func testCommandLine() throws {
        let id = fixture.event.uuidString.lowercased()
        func run(_ args: [String], token: String? = nil) throws -> CommandLineTests.Outcome {
            try CommandLineTests.execute(args, env: ["STAFFCAST_SERVER": server.http, "STAFFCAST_TOKEN": token ?? fixture.ownerToken,
                                                     "HOME": NSTemporaryDirectory()])
        }
        var r = try run(["team", "create", "--event", id, "Security"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(r.stdout, "Security\n")
        XCTAssertEqual(try run(["team", "create", "--event", id, "--zone", "Gate 3"]).status, 0)
        r = try run(["team", "add", "--event", id, "--team", "Security", "--user", fixture.staff.uuidString])
        XCTAssertEqual(r.status, 0, r.stderr)
        r = try run(["team", "list", "--event", id])
        XCTAssertTrue(r.stdout.contains("Security") && r.stdout.contains("zone"), r.stdout)
        r = try run(["team", "add", "--event", id, "--team", "Nope", "--user", fixture.staff.uuidString])
        XCTAssertEqual(r.status, 2, "not found: exit 2 (the CLI convention)")
        XCTAssertTrue(r.stderr.contains("no team or zone named 'Nope'"), r.stderr)
        r = try run(["team", "checkin-link", "--event", id, "--team", "Gate 3", "--qr"])
        XCTAssertEqual(r.status, 0, r.stderr)
        let link = r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        XCTAssertEqual(link, "\(server.http)/checkin/\(id)/Gate%203")
        XCTAssertTrue(r.stderr.contains("█") || r.stderr.contains("▀") || r.stderr.contains("▄"), "a QR code on stderr")
        XCTAssertEqual(try run(["team", "checkin-link", "--event", id, "--team", "Security"]).status, 1, "not a zone")
        r = try run(["checkin", link], token: fixture.staffToken)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(try server.api(fixture.ownerToken).teamMembers(event: fixture.event, team: "Gate 3").map(\.userID), [fixture.staff])
        XCTAssertEqual(try run(["checkin", "http://nowhere/join/abc"], token: fixture.staffToken).status, 1)
        r = try run(["team", "remove", "--event", id, "--team", "Security", "--user", fixture.staff.uuidString])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(try run(["team", "delete", "--event", id, "Security"]).status, 0)
        XCTAssertEqual(try run(["team", "delete", "--event", id, "Security"]).status, 2)
        r = try run(["reach", "--event", id])
        XCTAssertTrue(r.stdout.contains("zone Gate 3: "), r.stdout)
    }
}
