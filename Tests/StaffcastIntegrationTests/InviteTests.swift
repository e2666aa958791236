import Foundation
import StaffcastClient
import StaffcastCore
@testable import StaffcastPostgres
import XCTest

/// Invite links (docs/protocol.md, Invites) through a real server, PostgreSQL's row-level
/// security on `invites` directly in SQL, and the `staffcast admin invite` / `join` commands.
final class InviteTests: IntegrationTestCase {
    override class var startsServer: Bool { true }

    func post(_ path: String, token: String?, _ body: [String: Any]) throws -> (status: Int, json: [String: Any]) {
        let r = try server.api(token).raw("POST", path, body: try JSONSerialization.data(withJSONObject: body),
                                          contentType: "application/json")
        return (r.status, (try? JSONSerialization.jsonObject(with: r.body) as? [String: Any]) ?? [:])
    }

    func createInvite(_ token: String, _ body: [String: Any] = [:]) throws -> (status: Int, json: [String: Any]) {
        try post("/v1/events/\(fixture.event.uuidString.lowercased())/invites", token: token, body)
    }

    func redeem(_ code: String, _ name: String = "Nina New") throws -> (status: Int, json: [String: Any]) {
        try post("/v1/invites/\(code)/redeem", token: nil, ["display_name": name])
    }

    func errorCode(_ json: [String: Any]) -> String? { (json["error"] as? [String: Any])?["code"] as? String }

    /// Waits until the server's in-memory table accepts `token` (it follows token_changes).
    func waitUntilAccepted(_ token: String) throws {
        XCTAssertTrue(try waitUntil(5) { try server.api(token).raw("GET", "/v1/me/events").status == 200 },
                      "the redeemed token was not accepted within 5 s")
    }

    func testCreateRedeemAndTheNewStaffMemberReceivesMessages() throws {
        let created = try createInvite(fixture.ownerToken, ["max_uses": 2, "expires_in_minutes": 30])
        XCTAssertEqual(created.status, 201, "\(created.json)")
        let code = try XCTUnwrap(created.json["code"] as? String)
        XCTAssertEqual(created.json["url"] as? String, "http://127.0.0.1:\(server.port)/join/\(code)")
        XCTAssertEqual(created.json["event_id"] as? String, fixture.event.uuidString.lowercased())
        XCTAssertEqual(created.json["access_level"] as? String, "staff")
        XCTAssertEqual(created.json["max_uses"] as? Int, 2)
        XCTAssertEqual(created.json["uses"] as? Int, 0)
        let expires = try XCTUnwrap(RFC3339.parse(try XCTUnwrap(created.json["expires_at"] as? String)))
        XCTAssertEqual(expires.timeIntervalSinceNow, 30 * 60, accuracy: 30)

        let joined = try redeem(code, "Nina New")
        XCTAssertEqual(joined.status, 201, "\(joined.json)")
        let token = try XCTUnwrap(joined.json["token"] as? String)
        let user = try XCTUnwrap((joined.json["user_id"] as? String).flatMap(UUID.init(uuidString:)))
        XCTAssertEqual(joined.json["event_id"] as? String, fixture.event.uuidString.lowercased())
        XCTAssertEqual(joined.json["access_level"] as? String, "staff")
        XCTAssertEqual(try fixture.count("SELECT count(*) FROM profiles WHERE id = $1 AND display_name = 'Nina New'", [user.uuidString]), 1)
        XCTAssertEqual(try fixture.count("SELECT count(*) FROM event_access WHERE user_id = $1 AND access_level = 'staff'", [user.uuidString]), 1)
        XCTAssertEqual(try fixture.count("SELECT uses FROM invites"), 1)

        // The token went the way of `admin token issue`: the upgrade table takes it from token_changes.
        try waitUntilAccepted(token)
        let socket = try server.connect(token)
        defer { socket.close() }
        _ = try socket.subscribe(fixture.event)
        _ = try fixture.store.send(as: fixture.owner, SendRequest(eventID: fixture.event, message: "Welcome aboard"))
        XCTAssertEqual(try socket.expect("message").message?.message, "Welcome aboard")
        // Staff cannot send.
        XCTAssertEqual(try server.api(token).raw("POST", "/v1/events/\(fixture.event.uuidString.lowercased())/messages",
                                                 body: Data("x".utf8), contentType: "text/plain").status, 403)
    }

    /// A display name with a line break would print as a second reader in `staffcast receipts`
    /// ("Eve\n  ✓ Fake Person", found by an attack from outside): refused, nothing stored, and
    /// the same rule for names made from the shell (terminal escapes among them).
    func testANameWithALineBreakOrATerminalEscapeIsRefused() throws {
        let code = try XCTUnwrap(try createInvite(fixture.adminToken, ["max_uses": 5]).json["code"] as? String)
        let refused = try redeem(code, "Eve\n  ✓ Fake Person  2026-11-27T13:00:00.000Z")
        XCTAssertEqual(refused.status, 400)
        XCTAssertEqual(errorCode(refused.json), "invalid")
        XCTAssertEqual(try fixture.count("SELECT count(*) FROM profiles WHERE display_name LIKE 'Eve%'"), 0)
        XCTAssertEqual(try redeem(code, "Eve").status, 201, "the invite is still good")
        XCTAssertThrowsError(try fixture.store.createUser(name: "Mal\u{1B}]0;PWNED\u{07}ory"))
        XCTAssertThrowsError(try fixture.store.createEvent(name: "Fest\u{1B}[2J", startsAt: nil))
    }

    func testUseCountExpiryAndRevokeAreGone() throws {
        let once = try XCTUnwrap(try createInvite(fixture.adminToken, ["max_uses": 1]).json["code"] as? String)
        XCTAssertEqual(try redeem(once).status, 201)
        let second = try redeem(once, "Second Person")
        XCTAssertEqual(second.status, 410)
        XCTAssertEqual(errorCode(second.json), "gone")
        XCTAssertEqual(try fixture.count("SELECT count(*) FROM profiles WHERE display_name = 'Second Person'"), 0,
                       "a refused redeem leaves no profile")

        let expiring = try XCTUnwrap(try createInvite(fixture.adminToken, ["max_uses": 5]).json["code"] as? String)
        try fixture.store.conn.query("UPDATE invites SET expires_at = now() - interval '1 second' WHERE code_hash = $1",
                                     [TokenHasher.storedHash(of: expiring)])
        let expired = try redeem(expiring)
        XCTAssertEqual(expired.status, 410)
        XCTAssertEqual(errorCode(expired.json), "gone")

        let revoking = try XCTUnwrap(try createInvite(fixture.ownerToken, ["max_uses": 5]).json["code"] as? String)
        // Another event's admin cannot revoke it; staff neither.
        XCTAssertEqual(try server.api(fixture.staffToken).raw("DELETE", "/v1/invites/\(revoking)").status, 404)
        XCTAssertEqual(try server.api(fixture.outsiderToken).raw("DELETE", "/v1/invites/\(revoking)").status, 404)
        XCTAssertEqual(try server.api(fixture.adminToken).raw("DELETE", "/v1/invites/\(revoking)").status, 200)
        let revoked = try redeem(revoking)
        XCTAssertEqual(revoked.status, 410)
        XCTAssertEqual(errorCode(revoked.json), "gone")

        let unknown = try redeem("AAAAAAAAAAAAAAAAAAAAAA")
        XCTAssertEqual(unknown.status, 404)

        // Audited: create, redeem, revoke.
        let actions = try fixture.store.auditLog(limit: 50).map(\.action)
        XCTAssertEqual(actions.filter { $0 == "invite_create" }.count, 3)
        XCTAssertEqual(actions.filter { $0 == "invite_redeem" }.count, 1)
        XCTAssertEqual(actions.filter { $0 == "invite_revoke" }.count, 1)

        // Clean-up: invites that expired over a day ago go; others stay.
        try fixture.store.conn.query("UPDATE invites SET expires_at = now() - interval '2 days' WHERE code_hash = $1",
                                     [TokenHasher.storedHash(of: expiring)])
        XCTAssertEqual(try fixture.store.deleteStaleInvites(), 1)
        XCTAssertEqual(try fixture.count("SELECT count(*) FROM invites"), 2)
    }

    func testLevelCeilingAndWhoMayInvite() throws {
        XCTAssertEqual(try createInvite(fixture.ownerToken, ["access_level": "owner"]).status, 201)
        XCTAssertEqual(try createInvite(fixture.ownerToken, ["access_level": "admin"]).status, 201)
        let above = try createInvite(fixture.adminToken, ["access_level": "owner"])
        XCTAssertEqual(above.status, 403)
        XCTAssertEqual(errorCode(above.json), "forbidden")
        XCTAssertEqual(try createInvite(fixture.adminToken, ["access_level": "admin"]).status, 201)
        XCTAssertEqual(try createInvite(fixture.staffToken).status, 403)
        XCTAssertEqual(try createInvite(fixture.outsiderToken).status, 404, "an event one cannot see is answered like a missing one")
        XCTAssertEqual(try createInvite(fixture.adminToken, ["max_uses": 0]).status, 400)
        XCTAssertEqual(try createInvite(fixture.adminToken, ["expires_in_minutes": 20_000]).status, 400)
        XCTAssertEqual(try createInvite(fixture.adminToken, ["access_level": "king"]).status, 400)
        XCTAssertEqual(try post("/v1/events/\(UUID().uuidString.lowercased())/invites", token: fixture.adminToken, [:]).status, 404)
        XCTAssertEqual(try post("/v1/events/\(fixture.event.uuidString.lowercased())/invites", token: nil, [:]).status, 401)
        // An owner invite grants owner.
        let code = try XCTUnwrap(try createInvite(fixture.ownerToken, ["access_level": "owner"]).json["code"] as? String)
        XCTAssertEqual(try redeem(code).json["access_level"] as? String, "owner")
        // A bad name is refused and uses nothing.
        let named = try XCTUnwrap(try createInvite(fixture.ownerToken).json["code"] as? String)
        XCTAssertEqual(try redeem(named, "  ").status, 400)
        XCTAssertEqual(try redeem(named, "Bell\u{7}").status, 400)
        XCTAssertEqual(try fixture.count("SELECT uses FROM invites WHERE code_hash = $1", [TokenHasher.storedHash(of: named)]), 0)
    }

    /// An invite works only while its creator could still make it (found from outside: an admin
    /// invite kept granting admin after its maker was demoted, revoked or deleted). Checked at
    /// redeem, in the redeem's transaction (sql/018), so on every server alike.
    /// A code that is not a live invite is answered without the access gate (sql/020): while the
    /// gate is held (as a grant or a revoke holds it), a bogus code's answer does not wait, and
    /// a live invite's redeem waits for the gate and then works.
    func testOnlyALiveInviteWaitsForTheAccessGate() throws {
        let created = try createInvite(fixture.ownerToken)
        let code = try XCTUnwrap(created.json["code"] as? String)
        let bogus = String(code.dropLast()) + (code.hasSuffix("A") ? "B" : "A")
        let gate = try PGConnection(conninfo: fixture.conninfo)
        _ = try gate.query("SELECT pg_advisory_lock(7354000, 0)")
        let started = Date()
        XCTAssertNotEqual(try redeem(bogus).status, 201)
        XCTAssertLessThan(Date().timeIntervalSince(started), 5, "a bogus code waited for the gate")
        let answered = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var status = 0
        nonisolated(unsafe) let test = self // only the redeem runs on the other thread
        DispatchQueue.global().async {
            status = (try? test.redeem(code).status) ?? -1
            answered.signal()
        }
        XCTAssertEqual(answered.wait(timeout: .now() + 1.5), .timedOut, "a live invite's redeem waits for the gate")
        _ = try gate.query("SELECT pg_advisory_unlock(7354000, 0)")
        XCTAssertEqual(answered.wait(timeout: .now() + 20), .success)
        XCTAssertEqual(status, 201)
    }

    func testAnInviteDiesWithItsCreatorsRights() throws {
        func invite(_ token: String, _ level: String) throws -> String {
            try XCTUnwrap(try createInvite(token, ["access_level": level, "max_uses": 5]).json["code"] as? String)
        }
        func assertRefused(_ code: String, _ words: String, line: UInt = #line) throws {
            let r = try redeem(code, "Too Late")
            XCTAssertEqual(r.status, 410, "\(r.json)", line: line)
            XCTAssertEqual(errorCode(r.json), "gone", line: line)
            let message = (r.json["error"] as? [String: Any])?["message"] as? String ?? ""
            XCTAssertTrue(message.contains(words), message, line: line)
        }
        let demoted = try fixture.person("Dee Moted", level: .admin)
        let adminInvite = try invite(demoted.token, "admin")
        let staffInvite = try invite(demoted.token, "staff")
        XCTAssertEqual(try redeem(adminInvite, "Early Bird").json["access_level"] as? String, "admin")
        try fixture.store.grant(event: fixture.event, user: demoted.id, level: .staff)
        try assertRefused(adminInvite, "no longer holds the level")
        try assertRefused(staffInvite, "no longer holds the level") // staff do not invite at all
        // On a second server too, and straight through the function as the server's login.
        let other = try startServer()
        let r = try other.api(nil).raw("POST", "/v1/invites/\(adminInvite)/redeem",
                                       body: Data(#"{"display_name":"Elsewhere"}"#.utf8), contentType: "application/json")
        XCTAssertEqual(r.status, 410)
        let login = try PGConnection(conninfo: TestDatabase.serverLogin(fixture.conninfo))
        XCTAssertEqual(try login.query("SELECT outcome FROM staffcast_redeem_invite($1, gen_random_uuid(), 'x', sha256('t'::bytea))",
                                       [TokenHasher.storedHash(of: adminInvite)]).string(0, 0), "creator_demoted")
        // Promoted back, the invite works again: the rule is what the creator holds now.
        try fixture.store.grant(event: fixture.event, user: demoted.id, level: .admin)
        XCTAssertEqual(try redeem(staffInvite, "Back Again").status, 201)

        // An owner demoted to admin still covers an admin invite, not an owner one.
        let owner = try fixture.person("Oona Owner", level: .owner)
        let ownerLevel = try invite(owner.token, "owner"), adminLevel = try invite(owner.token, "admin")
        try fixture.store.grant(event: fixture.event, user: owner.id, level: .admin)
        try assertRefused(ownerLevel, "no longer holds the level")
        XCTAssertEqual(try redeem(adminLevel, "Still Fine").json["access_level"] as? String, "admin")

        // Access revoked, or the creator deleted (profile gone, or kept as a sender): gone.
        let revoked = try fixture.person("Rev Oked", level: .admin)
        let deleted = try fixture.person("Del Eted", level: .admin)
        let sender = try fixture.person("Sen Der", level: .admin)
        let (fromRevoked, fromDeleted, fromSender) = (try invite(revoked.token, "staff"), try invite(deleted.token, "staff"),
                                                      try invite(sender.token, "staff"))
        _ = try fixture.store.send(as: sender.id, SendRequest(eventID: fixture.event, message: "Doors at six"))
        XCTAssertTrue(try fixture.store.revoke(event: fixture.event, user: revoked.id))
        XCTAssertFalse(try fixture.store.deleteUser(deleted.id).keptAsSender)
        XCTAssertTrue(try fixture.store.deleteUser(sender.id).keptAsSender)
        for code in [fromRevoked, fromDeleted, fromSender] { try assertRefused(code, "no longer runs this event") }
        XCTAssertEqual(try fixture.count("SELECT count(*) FROM profiles WHERE display_name = 'Too Late'"), 0)

        // An invite made from the shell has no creator to outlive: it still works.
        let shell = try fixture.store.createInvite(InviteRequest(eventID: fixture.event, accessLevel: .admin,
                                                                 expiresInMinutes: 60, maxUses: 1), base: "http://x")
        XCTAssertEqual(try redeem(shell.code, "From The Shell").json["access_level"] as? String, "admin")
    }

    func testCodesAreStoredOnlyAsHashes() throws {
        let created = try createInvite(fixture.ownerToken, ["max_uses": 3])
        let code = try XCTUnwrap(created.json["code"] as? String)
        XCTAssertTrue(InviteURL.looksLikeCode(code))
        XCTAssertEqual(try fixture.count("SELECT count(*) FROM invites WHERE code_hash = sha256(convert_to($1, 'UTF8'))", [code]), 1)
        // The code appears in no column of any row.
        XCTAssertEqual(try fixture.count("SELECT count(*) FROM invites i WHERE strpos(i::text, $1) > 0", [code]), 0)
        XCTAssertEqual(try fixture.count("SELECT count(*) FROM audit_log a WHERE strpos(a::text, $1) > 0", [code]), 0)
        // And the redeemed token only as a hash too.
        let token = try XCTUnwrap(try redeem(code).json["token"] as? String)
        XCTAssertEqual(try fixture.count("SELECT count(*) FROM api_tokens t WHERE strpos(t::text, $1) > 0", [token]), 0)
    }

    func testRedeemingIsRateLimitedPerAddress() throws {
        var statuses: [Int] = []
        for _ in 0..<12 { statuses.append(try redeem("BBBBBBBBBBBBBBBBBBBBBB").status) }
        XCTAssertEqual(statuses.prefix(10).filter { $0 == 404 }.count, 10, "\(statuses)")
        XCTAssertEqual(statuses.suffix(2), [429, 429], "\(statuses)")
        let r = try server.api(nil).raw("POST", "/v1/invites/BBBBBBBBBBBBBBBBBBBBBB/redeem",
                                       body: Data(#"{"display_name":"x"}"#.utf8), contentType: "application/json")
        XCTAssertEqual(r.status, 429)
    }

    /// A briefing behind one address (venue NAT, a TLS proxy): joins never count against the
    /// address, and wrong codes from it do not keep a live link out.
    func testACrowdJoinsFromOneAddressAndWrongCodesDoNotLockOutALiveLink() throws {
        let code = try XCTUnwrap(try createInvite(fixture.ownerToken, ["max_uses": 300]).json["code"] as? String)
        let statuses = try (0..<30).map { try redeem(code, "Crew \($0)").status }
        XCTAssertEqual(statuses, Array(repeating: 201, count: 30))
        // Someone guesses from the same address until refused…
        let guesses = try (0..<12).map { _ in try redeem("CCCCCCCCCCCCCCCCCCCCCC").status }
        XCTAssertEqual(guesses.suffix(2), [429, 429], "\(guesses)")
        // …the link in use still works, and so does a new one made through this server.
        XCTAssertEqual(try redeem(code, "Late Arrival").status, 201)
        let fresh = try XCTUnwrap(try createInvite(fixture.adminToken, ["max_uses": 5]).json["code"] as? String)
        XCTAssertEqual(try redeem(fresh, "Second Team").status, 201)
        // A link made elsewhere (the admin command) waits at most one refill (5 s) for its first use.
        let elsewhere = try fixture.store.createInvite(try InviteRequest(eventID: fixture.event, maxUses: 5), base: "http://x").code
        let refused = try server.api(nil).raw("POST", "/v1/invites/\(elsewhere)/redeem",
                                              body: Data(#"{"display_name":"Third Team"}"#.utf8), contentType: "application/json")
        XCTAssertEqual(refused.status, 429)
        let message = ((try JSONSerialization.jsonObject(with: refused.body) as? [String: Any])?["error"] as? [String: Any])?["message"] as? String
        XCTAssertTrue(message?.contains("try again in 5 s") == true, message ?? "")
        XCTAssertTrue(try waitUntil(8) { try self.redeem(elsewhere, "Third Team").status == 201 })
        // A malformed code costs no lookup and no try.
        XCTAssertEqual(try redeem("AAAA").status, 404)
    }

    func testQRCodeForTheConsole() throws {
        let r = try server.api(fixture.ownerToken).raw("POST", "/v1/events/\(fixture.event.uuidString.lowercased())/invites",
                                                      query: ["qr": "svg"], body: Data("{}".utf8), contentType: "application/json")
        XCTAssertEqual(r.status, 201)
        let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: r.body) as? [String: Any])
        let svg = try XCTUnwrap(json["qr_svg"] as? String)
        XCTAssertTrue(svg.hasPrefix("<svg xmlns=\"http://www.w3.org/2000/svg\""), svg)
        XCTAssertTrue(svg.contains("<path fill=\"#000\" d=\"M"), svg)
        XCTAssertNotNil(json["code"] as? String)
    }

    // MARK: row-level security on invites, directly in SQL

    func asUser<T>(_ user: UUID, _ body: (PGConnection) throws -> T) throws -> T {
        try PGConnection(conninfo: fixture.conninfo).transaction(asUser: user, "READ COMMITTED", body)
    }

    func insertInvite(as user: UUID, level: String, event: UUID? = nil) throws {
        _ = try asUser(user) {
            try $0.query("""
                INSERT INTO invites (code_hash, event_id, access_level, created_by, expires_at, max_uses)
                VALUES (sha256(gen_random_uuid()::text::bytea), $1, $2, $3, now() + interval '1 hour', 1)
                """, [(event ?? fixture.event).uuidString, level, user.uuidString])
        }
    }

    func assertRLSRefuses(_ body: () throws -> Void, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try body(), file: file, line: line) { error in
            XCTAssertEqual((error as? PostgresError)?.sqlState, "42501", "\(error)", file: file, line: line)
        }
    }

    func testRowLevelSecurityOnInvitesInSQL() throws {
        try insertInvite(as: fixture.owner, level: "owner")
        try insertInvite(as: fixture.admin, level: "admin")
        try insertInvite(as: fixture.admin, level: "staff")
        assertRLSRefuses { try insertInvite(as: fixture.admin, level: "owner") }   // above their own level
        assertRLSRefuses { try insertInvite(as: fixture.staff, level: "staff") }   // staff do not invite
        assertRLSRefuses { try insertInvite(as: fixture.outsider, level: "staff") }
        // Nobody creates one in someone else's name.
        assertRLSRefuses {
            _ = try asUser(fixture.admin) {
                try $0.query("""
                    INSERT INTO invites (code_hash, event_id, access_level, created_by, expires_at, max_uses)
                    VALUES (sha256('forged'::bytea), $1, 'staff', $2, now() + interval '1 hour', 1)
                    """, [fixture.event.uuidString, fixture.owner.uuidString])
            }
        }
        func visible(_ user: UUID) throws -> Int { try asUser(user) { try $0.query("SELECT count(*) FROM invites").int(0, 0) ?? -1 } }
        XCTAssertEqual(try visible(fixture.owner), 3)
        XCTAssertEqual(try visible(fixture.admin), 3)
        XCTAssertEqual(try visible(fixture.staff), 0)
        XCTAssertEqual(try visible(fixture.outsider), 0)
        // Revoking: admins of the event only, and only revoked_at may change.
        XCTAssertEqual(try asUser(fixture.staff) { try $0.query("UPDATE invites SET revoked_at = now()").affectedRows }, 0)
        XCTAssertEqual(try asUser(fixture.outsider) { try $0.query("UPDATE invites SET revoked_at = now()").affectedRows }, 0)
        assertRLSRefuses { _ = try asUser(fixture.admin) { try $0.query("UPDATE invites SET uses = 0") } }
        assertRLSRefuses { _ = try asUser(fixture.admin) { try $0.query("UPDATE invites SET max_uses = 10000") } }
        XCTAssertEqual(try asUser(fixture.admin) { try $0.query("UPDATE invites SET revoked_at = now()").affectedRows }, 3)
        // Nobody deletes through the app role.
        assertRLSRefuses { _ = try asUser(fixture.owner) { try $0.query("DELETE FROM invites") } }

        // The server's own login touches invites only through the two functions.
        let login = try PGConnection(conninfo: TestDatabase.serverLogin(fixture.conninfo))
        assertRLSRefuses { _ = try login.query("SELECT count(*) FROM invites") }
        assertRLSRefuses { _ = try login.query("UPDATE invites SET uses = 0") }
        assertRLSRefuses { _ = try login.query("INSERT INTO profiles (id, display_name) VALUES (gen_random_uuid(), 'x')") }
        XCTAssertEqual(try login.query("SELECT staffcast_delete_stale_invites(86400)").int(0, 0), 0)
        XCTAssertEqual(try login.query("""
            SELECT outcome FROM staffcast_redeem_invite(sha256('no such code'::bytea), gen_random_uuid(), 'x', sha256('t'::bytea))
            """).string(0, 0), "unknown")
        // A user cannot call them at all.
        assertRLSRefuses { _ = try asUser(fixture.owner) { try $0.query("SELECT staffcast_delete_stale_invites(0)") } }
    }

    // MARK: the command line

    /// Reads a QR code drawn on a terminal (half blocks, light modules drawn) with zbarimg, as
    /// a phone camera would see a dark terminal: drawn = light, blank = dark.
    static func scan(terminalQR text: String, in dir: String) throws -> String {
        let rows = text.split(separator: "\n").filter { $0.contains("█") || $0.contains("▀") || $0.contains("▄") }
        let width = rows.map(\.count).max() ?? 0
        let scale = 6, pad = 4
        var pixels: [[UInt8]] = []
        for row in rows {
            var top: [UInt8] = [], bottom: [UInt8] = []
            for c in row.padding(toLength: width, withPad: " ", startingAt: 0) {
                top.append(c == "█" || c == "▀" ? 255 : 0)
                bottom.append(c == "█" || c == "▄" ? 255 : 0)
            }
            pixels += [top, bottom]
        }
        let w = (width + 2 * pad) * scale, h = (pixels.count + 2 * pad) * scale
        var pgm = "P2\n\(w) \(h)\n255\n"
        for y in 0..<h {
            let py = y / scale - pad
            var line: [String] = []
            for x in 0..<w {
                let px = x / scale - pad
                let v: UInt8 = py >= 0 && py < pixels.count && px >= 0 && px < width ? pixels[py][px] : 255
                line.append(String(v))
            }
            pgm += line.joined(separator: " ") + "\n"
        }
        let file = dir + "/qr.pgm"
        try pgm.write(toFile: file, atomically: true, encoding: .ascii)
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/zbarimg") else {
            XCTFail("zbarimg (Debian zbar-tools) reads the QR code back: run scripts/install-deps.sh")
            return ""
        }
        let outcome = try ProcessRunner.run("/usr/bin/zbarimg", ["--raw", "-q", file])
        // ProcessRunner merges stderr in (zbarimg may complain about D-Bus there): the decoded text is a line of its own.
        return outcome.output.split(separator: "\n").last { $0.hasPrefix("http") }.map(String.init) ?? outcome.output
    }

    /// Without --server the link takes the configured listen port (it said 8080 whatever the
    /// server listened on) and says it is a guess.
    func testAnInviteWithoutServerUsesTheConfiguredPortAndSaysItGuessed() throws {
        let created = try CommandLineTests.execute(
            ["admin", "invite", "create", "--event", fixture.event.uuidString.lowercased(),
             "--database-url", fixture.conninfo, "--log-level", "error"],
            env: ["STAFFCAST_LISTEN": "0.0.0.0:18333", "STAFFCAST_SERVER": ""])
        XCTAssertEqual(created.status, 0, created.stderr)
        XCTAssertTrue(created.stdout.hasPrefix("http://\(ProcessInfo.processInfo.hostName):18333/join/"), created.stdout)
        XCTAssertTrue(created.stderr.contains("is a guess"), created.stderr)
    }

    func testAdminInviteCreatePrintsTheURLAndJoinSavesAWorkingToken() throws {
        let home = NSTemporaryDirectory() + "sc-join-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: home) }
        let created = try CommandLineTests.execute(
            ["admin", "invite", "create", "--event", fixture.event.uuidString.lowercased(), "--uses", "3", "--expires", "30m",
             "--server", server.http, "--qr", "--database-url", fixture.conninfo, "--log-level", "error"])
        XCTAssertEqual(created.status, 0, created.stderr)
        let url = created.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        XCTAssertTrue(url.hasPrefix(server.http + "/join/"), url)
        XCTAssertNotNil(InviteURL.parse(url))
        XCTAssertTrue(created.stderr.contains("█"), "a QR code on stderr with --qr:\n\(created.stderr)")
        XCTAssertFalse(created.stdout.contains("█"), "stdout holds the URL alone")
        XCTAssertEqual(try Self.scan(terminalQR: created.stderr, in: home), url, "a QR reader reads the terminal's code as the URL")

        let env = ["HOME": home, "LANG": "C.UTF-8", "LC_ALL": "", "LC_MESSAGES": "", "STAFFCAST_SERVER": "", "STAFFCAST_TOKEN": ""]
        let joined = try CommandLineTests.execute(["join", url, "--name", "Jo Joiner"], env: env)
        XCTAssertEqual(joined.status, 0, joined.stderr)
        XCTAssertTrue(joined.stdout.contains("Welcome, Jo Joiner"), joined.stdout)
        let tokenPath = home + "/.config/staffcast/token"
        let mode = try XCTUnwrap(try FileManager.default.attributesOfItem(atPath: tokenPath)[.posixPermissions] as? NSNumber)
        XCTAssertEqual(mode.intValue & 0o777, 0o600)
        let token = try String(contentsOfFile: tokenPath, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        XCTAssertTrue(TokenHasher.looksValid(token))
        // The event is saved too: `staffcast history` (and watch) need no --event after a join.
        let history = try CommandLineTests.execute(["history", "--json"], env: env)
        XCTAssertEqual(history.status, 0, history.stderr)
        XCTAssertTrue(history.stdout.contains("\"messages\""), history.stdout)

        // Joining again would overwrite the token: refused without --force (and no use taken).
        let again = try CommandLineTests.execute(["join", url, "--name", "Jo Again"], env: env)
        XCTAssertNotEqual(again.status, 0)
        XCTAssertTrue(again.stderr.contains("already holds a token"), again.stderr)
        XCTAssertEqual(try fixture.count("SELECT uses FROM invites"), 1)

        // In Turkish, and `watch` works right after with the saved token and server.
        let tr = try CommandLineTests.execute(["join", url, "--name", "Ayşe", "--token-file", home + "/ayse.token"],
                                             env: env.merging(["LANG": "tr_TR.UTF-8"]) { $1 })
        XCTAssertEqual(tr.status, 0, tr.stderr)
        XCTAssertTrue(tr.stdout.contains("Hoş geldiniz, Ayşe"), tr.stdout)

        let p = Process()
        p.executableURL = URL(fileURLWithPath: CommandLineTests.binary)
        p.arguments = ["watch", "--event", fixture.event.uuidString.lowercased(), "--json"]
        p.environment = ProcessInfo.processInfo.environment.merging(env) { $1 }.filter { !$0.value.isEmpty }
        let out = home + "/watch.txt"
        XCTAssertTrue(FileManager.default.createFile(atPath: out, contents: nil))
        p.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: out))
        p.standardError = FileHandle.nullDevice
        try p.run()
        defer { if p.isRunning { p.terminate(); p.waitUntilExit() } }
        XCTAssertTrue(waitUntil(8) { server.subscribers(fixture.event) == 1 }, "watch did not subscribe")
        _ = try fixture.store.send(as: fixture.owner, SendRequest(eventID: fixture.event, message: "Hello joiners"))
        var seen = ""
        waitUntil(8) {
            seen = (try? String(contentsOfFile: out, encoding: .utf8)) ?? ""
            return seen.contains("Hello joiners")
        }
        XCTAssertTrue(seen.contains("Hello joiners"), "watch with the joined token: \(seen)")

        // Revoking from the shell: a further join is gone.
        let revoked = try CommandLineTests.execute(["admin", "invite", "revoke", url, "--database-url", fixture.conninfo,
                                                    "--log-level", "error"])
        XCTAssertEqual(revoked.status, 0, revoked.stderr)
        let late = try CommandLineTests.execute(["join", url, "--name", "Late", "--token-file", home + "/late.token"], env: env)
        XCTAssertNotEqual(late.status, 0)
        XCTAssertTrue(late.stderr.contains("can no longer be used"), late.stderr)
    }
}
