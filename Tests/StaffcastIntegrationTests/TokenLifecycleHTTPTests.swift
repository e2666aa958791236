import Foundation
import StaffcastClient
import StaffcastCore
import StaffcastPostgres
import XCTest

/// Token lifecycle over HTTP (GET/DELETE /v1/users/{user_id}/tokens[/{token_id}]) and deleting
/// a user: who may, what is shown (never a token or its digest), the audit trail, and that the
/// sessions end within 2 s (4401).
final class TokenLifecycleHTTPTests: IntegrationTestCase {
    override func setUpWithError() throws {
        try super.setUpWithError()
        try startServer() { $0.opsToken = "ops-token-of-sixteen+" }
    }

    func path(_ user: UUID, _ token: UUID? = nil) -> String {
        "/v1/users/\(user.uuidString.lowercased())/tokens" + (token.map { "/" + $0.uuidString.lowercased() } ?? "")
    }

    func list(_ bearer: String, _ user: UUID) throws -> [[String: Any]] {
        let r = try server.api(bearer).raw("GET", path(user))
        XCTAssertEqual(r.status, 200, String(decoding: r.body, as: UTF8.self))
        let object = try JSONSerialization.jsonObject(with: r.body) as? [String: Any]
        XCTAssertEqual(object?["user_id"] as? String, user.uuidString.lowercased())
        return object?["tokens"] as? [[String: Any]] ?? []
    }

    /// Reads until the socket closes; its close code (fails after `within` seconds).
    func closeCode(_ socket: TestSocket, within: TimeInterval = 2.5, file: StaticString = #filePath, line: UInt = #line) -> UInt16? {
        let deadline = Date().addingTimeInterval(within)
        do {
            while Date() < deadline { _ = try socket.nextOrNil(timeout: max(0.01, deadline.timeIntervalSinceNow)) }
        } catch ClientError.closed(let code, _) {
            return code
        } catch {
            XCTFail("\(error)", file: file, line: line)
            return nil
        }
        XCTFail("the socket was not closed within \(within) s", file: file, line: line)
        return nil
    }

    func testAnOwnerListsAndRevokesOneTokenItsSocketClosesWithin2sAndItIsAudited() throws {
        let tablet = try fixture.store.issueToken(user: fixture.staff, label: "gate 3 tablet", expiresIn: 3_600)
        try waitUntil(5, poll: 0.05) { try server.api(tablet).raw("GET", "/v1/me/events").status == 200 }
        let socket = try server.subscriber(tablet, fixture.event)
        let other = try server.connect(fixture.staffToken)

        let r = try server.api(fixture.ownerToken).raw("GET", path(fixture.staff))
        let text = String(decoding: r.body, as: UTF8.self)
        for secret in [tablet, fixture.staffToken, TokenHasher.digest(of: tablet).hex] {
            XCTAssertFalse(text.contains(secret), "a token or its digest was shown")
        }
        let tokens = try list(fixture.ownerToken, fixture.staff)
        XCTAssertEqual(tokens.count, 2)
        let entry = try XCTUnwrap(tokens.first { $0["label"] as? String == "gate 3 tablet" })
        for key in ["id", "created_at", "last_used_at", "expires_at", "revoked_at", "state"] {
            XCTAssertTrue(entry.keys.contains(key), "missing \(key)")
        }
        XCTAssertNotNil(entry["expires_at"] as? String)
        XCTAssertEqual(entry["state"] as? String, "active")
        let id = try XCTUnwrap((entry["id"] as? String).flatMap(UUID.init(uuidString:)))

        let started = Date()
        let revoked = try server.api(fixture.ownerToken).raw("DELETE", path(fixture.staff, id))
        XCTAssertEqual(revoked.status, 200)
        XCTAssertEqual((try JSONSerialization.jsonObject(with: revoked.body) as? [String: Any])?["revoked"] as? Int, 1)
        XCTAssertEqual(closeCode(socket), 4401)
        XCTAssertLessThan(Date().timeIntervalSince(started), 2.5)
        XCTAssertThrowsError(try WebSocketClient(url: server.ws, headers: ["Authorization": "Bearer \(tablet)"]))
        // The user's other token is untouched.
        try other.send(["op": "ping"])
        _ = try other.expect("pong")
        XCTAssertEqual(try list(fixture.ownerToken, fixture.staff).first { $0["label"] as? String == "gate 3 tablet" }?["state"] as? String,
                       "revoked")
        // Again: nothing more to revoke; a token id the user does not have is 404.
        XCTAssertEqual((try JSONSerialization.jsonObject(with: try server.api(fixture.ownerToken).raw("DELETE", path(fixture.staff, id)).body)
                        as? [String: Any])?["revoked"] as? Int, 0)
        XCTAssertEqual(try server.api(fixture.ownerToken).raw("DELETE", path(fixture.staff, UUID())).status, 404)

        let audit = try fixture.store.auditLog().first { $0.action == "token_revoke" }
        XCTAssertEqual(audit?.actor, "http: user \(fixture.owner.uuidString.lowercased())")
        XCTAssertEqual(audit?.userID, fixture.staff.uuidString.lowercased())
        XCTAssertEqual(audit?.detail, "one token: gate 3 tablet")
    }

    func testTheOpsTokenRevokesAllOfAUsersTokensAndTheirSocketsClose() throws {
        let socket = try server.connect(fixture.adminToken)
        let r = try server.api("ops-token-of-sixteen+").raw("DELETE", path(fixture.admin))
        XCTAssertEqual(r.status, 200, String(decoding: r.body, as: UTF8.self))
        XCTAssertEqual((try JSONSerialization.jsonObject(with: r.body) as? [String: Any])?["revoked"] as? Int, 1)
        XCTAssertEqual(closeCode(socket), 4401)
        XCTAssertEqual(try server.api(fixture.adminToken).raw("GET", "/v1/me/events").status, 401)
        XCTAssertEqual(try fixture.store.auditLog().first?.actor, "http: ops token")
        XCTAssertEqual(try list("ops-token-of-sixteen+", fixture.admin).first?["state"] as? String, "revoked")
    }

    func testOnlyOwnersOfTheUsersEventsTheUserThemselfAndOpsMayAndOthersLearnNothing() throws {
        // The user themself may list their own tokens.
        XCTAssertEqual(try list(fixture.staffToken, fixture.staff).count, 1)
        // An admin (not owner), another staff member and an outsider may not, and get exactly
        // what they get for a user that does not exist.
        let nobody = try server.api(fixture.ownerToken).raw("GET", path(UUID()))
        XCTAssertEqual(nobody.status, 404)
        for (bearer, user) in [(fixture.adminToken, fixture.staff), (fixture.staffToken, fixture.admin),
                               (fixture.outsiderToken, fixture.staff), (fixture.ownerToken, fixture.outsider)] {
            for method in ["GET", "DELETE"] {
                let r = try server.api(bearer).raw(method, path(user))
                XCTAssertEqual(r.status, nobody.status, "\(method) \(user)")
                XCTAssertEqual(r.body, nobody.body, "the body must not tell a forbidden user from a missing one")
            }
        }
        XCTAssertEqual(try server.api(nil).raw("GET", path(fixture.staff)).status, 401)
        XCTAssertEqual(try server.api(fixture.ownerToken).raw("POST", path(fixture.staff)).status, 405)
        // Nothing was revoked by any of that.
        XCTAssertEqual(try fixture.count("SELECT count(*) FROM api_tokens WHERE revoked_at IS NOT NULL"), 0)
    }

    /// A token opens every event of its user: the owner of one event may not revoke the tokens
    /// of someone who also works on another organiser's event (an attack found an owner
    /// locking a person out of events it does not own). The owner of all of a person's events,
    /// the person themself and the ops token still may.
    func testAnOwnerCannotRevokeTheTokensOfSomeoneWhoAlsoWorksOnAnotherOrganisersEvent() throws {
        let other = try fixture.store.createEvent(name: "Winter Fair", startsAt: nil)
        let otherOwner = try fixture.person("Otto Other-Owner", level: .owner, event: other)
        try fixture.store.grant(event: other, user: fixture.staff, level: .admin)
        for (bearer, method, target) in [(fixture.ownerToken, "DELETE", path(fixture.staff)),
                                         (otherOwner.token, "DELETE", path(fixture.staff))] {
            let r = try server.api(bearer).raw(method, target)
            XCTAssertEqual(r.status, 403, String(decoding: r.body, as: UTF8.self))
            XCTAssertTrue(String(decoding: r.body, as: UTF8.self).contains("staffcast admin revoke"), String(decoding: r.body, as: UTF8.self))
        }
        let one = try XCTUnwrap(list(fixture.ownerToken, fixture.staff).first?["id"] as? String)
        XCTAssertEqual(try server.api(fixture.ownerToken).raw("DELETE", path(fixture.staff) + "/" + one).status, 403)
        XCTAssertEqual(try fixture.count("SELECT count(*) FROM api_tokens WHERE revoked_at IS NOT NULL"), 0, "nothing was revoked")
        XCTAssertEqual(try server.api(fixture.staffToken).raw("GET", "/v1/me/events").status, 200)
        // Someone who works only on the caller's events is still theirs to manage.
        let onlyHere = try fixture.person("Nina Only-Here")
        XCTAssertEqual(try server.api(fixture.ownerToken).raw("DELETE", path(onlyHere.id)).status, 200)
        // The person themself may.
        XCTAssertEqual(try server.api(fixture.staffToken).raw("DELETE", path(fixture.staff)).status, 200)
    }

    func testLastUseIsRecordedAndListed() throws {
        try server.api(fixture.staffToken).call("GET", "/v1/me/events")
        _ = try server.connect(fixture.staffToken)
        server.server.flushTokenUse()
        var used: Any?
        try waitUntil(5) {
            used = try list(fixture.ownerToken, fixture.staff).first?["last_used_at"]
            return used is String
        }
        XCTAssertTrue(used is String, "last_used_at: \(String(describing: used))")
    }

    func testDeletingAUserEndsTheirSessionsWithin2sAndTheyCannotComeBack() throws {
        let socket = try server.subscriber(fixture.staffToken, fixture.event)
        let started = Date()
        let r = try CommandLineTests.execute(["admin", "user", "delete", "--user", fixture.staff.uuidString.lowercased(),
                                              "--database-url", fixture.conninfo])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stderr.contains("deleted user"), r.stderr)
        XCTAssertEqual(closeCode(socket, within: 2.5 + 3), 4401) // the CLI itself takes a moment to start
        XCTAssertLessThan(Date().timeIntervalSince(started), 8)
        XCTAssertThrowsError(try WebSocketClient(url: server.ws, headers: ["Authorization": "Bearer \(fixture.staffToken)"]))
        XCTAssertEqual(try fixture.count("SELECT count(*) FROM profiles WHERE id = $1", [fixture.staff.uuidString]), 0)
        XCTAssertEqual(try fixture.count("SELECT count(*) FROM event_access WHERE user_id = $1", [fixture.staff.uuidString]), 0)
        XCTAssertEqual(try fixture.store.auditLog().first?.action, "user_delete")
        // Deleting again, granting or issuing for them: there is no such user.
        XCTAssertThrowsError(try fixture.store.deleteUser(fixture.staff))
        XCTAssertThrowsError(try fixture.store.issueToken(user: fixture.staff))
    }

    /// An organiser who only set up a template and a scheduled send, and never sent a message,
    /// could not be deleted at all (attack round: a raw foreign-key error, and they kept their
    /// access and token). Now they are deleted like a sender: the profile is kept for what
    /// names it, and their pending scheduled send is cancelled, saying why.
    func testATemplateAndScheduleMakerIsDeletedAndTheirPendingSendCancelled() throws {
        _ = try fixture.store.createTemplate(as: fixture.admin, name: "gates", SendRequest(eventID: fixture.event, message: "Gates open"))
        let sendAt = RFC3339.format(Date().addingTimeInterval(3_600))
        let body = try JSONSerialization.data(withJSONObject: ["message": "Doors in an hour", "send_at": sendAt])
        let scheduled = try server.api(fixture.adminToken).raw("POST", "/v1/events/\(fixture.event.uuidString.lowercased())/messages",
                                                                body: body, contentType: "application/json")
        XCTAssertEqual(scheduled.status, 202, String(decoding: scheduled.body, as: UTF8.self))
        XCTAssertEqual(try fixture.count("SELECT count(*) FROM staff_messages WHERE sender_id = $1", [fixture.admin.uuidString]), 0)

        let done = try fixture.store.deleteUser(fixture.admin)
        XCTAssertEqual(done.tokens, 1)
        XCTAssertTrue(done.keptAsSender)
        XCTAssertEqual(done.scheduledCancelled, 1)
        XCTAssertEqual(try fixture.count("""
            SELECT count(*) FROM scheduled_messages WHERE sender_id = $1 AND status = 'cancelled' AND note = 'the sender was deleted'
            """, [fixture.admin.uuidString]), 1)
        XCTAssertEqual(try fixture.count("SELECT count(*) FROM event_access WHERE user_id = $1", [fixture.admin.uuidString]), 0)
        XCTAssertTrue(try waitUntil(3) { try server.api(fixture.adminToken).raw("GET", "/v1/me/events").status == 401 },
                      "their token still works (revocations reach every server within 2 s)")
        XCTAssertEqual(try fixture.store.templates(as: fixture.owner, event: fixture.event).map(\.name), ["gates"], "the template stays")
    }

    func testADeletedSenderStaysInHistoryButIsGone() throws {
        let admin = try server.connect(fixture.adminToken)
        _ = try fixture.store.send(as: fixture.admin, SendRequest(eventID: fixture.event, message: "before I leave"))
        let started = Date()
        let done = try fixture.store.deleteUser(fixture.admin)
        XCTAssertEqual(done.tokens, 1)
        XCTAssertEqual(done.events, 1)
        XCTAssertTrue(done.keptAsSender)
        XCTAssertEqual(closeCode(admin), 4401)
        XCTAssertLessThan(Date().timeIntervalSince(started), 2.5)
        let history = try fixture.store.history(as: fixture.staff, event: fixture.event, beforeSeq: nil, limit: 10)
        XCTAssertEqual(history.map(\.senderName), ["Adam Admin"])
        XCTAssertThrowsError(try fixture.store.grant(event: fixture.event, user: fixture.admin, level: .admin))
        XCTAssertThrowsError(try fixture.store.issueToken(user: fixture.admin))
        XCTAssertEqual(try server.api(fixture.ownerToken).raw("GET", path(fixture.admin)).status, 404)
    }
}
