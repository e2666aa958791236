import Foundation
import StaffcastClient
import StaffcastCore
import StaffcastPostgres
import XCTest

/// The staff app hands over to Web Push while hidden (docs/protocol.md, The staff app): a phone
/// in a pocket keeps its WebSocket open while the browser freezes the page, so the server would
/// count it connected, push nothing for a normal message, and the page would show nothing. Real
/// server, real PostgreSQL, headless Chromium (`scripts/app-background-browser-test.py`) and the
/// test push service of PushTests (`scripts/test-counterparts.py push`, which decrypts each
/// push). The app's tab is hidden by bringing another tab to the front (real visibilitychange
/// events, timers still running); its hand-over wait is shortened to 3 s. This side checks what
/// the server did: a message while visible went live and was not pushed; hidden past the wait,
/// the person is not connected (reach, presence) and a normal message is pushed to the phone's
/// subscription; shown again, the app reconnects and lists it once. Then hidden with a long wait
/// and frozen (no timer runs in a frozen page): the app hands over at the freeze event.
final class AppBackgroundTests: IntegrationTestCase {
    func testAHiddenPhoneWithPushHandsOverToPushAndCatchesUpWhenShown() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("staffcast-background-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let service = try Counterpart(["push", "--ca", dir.appendingPathComponent("push-ca.pem").path])
        defer { service.stop() }
        let ca = service.info["ca"] as? String
        try startServer {
            $0.reach.pushVapidKey = dir.appendingPathComponent("push_vapid_key.pem").path
            $0.reach.pushContact = "mailto:ops@example.org"
            $0.reach.caFile = ca
            // The test push service is on 127.0.0.1.
            $0.reach.allowPrivateHosts = true
        }
        let owner = try server.api(fixture.ownerToken)
        let event = fixture.event.uuidString.lowercased()
        let invite = try JSONSerialization.jsonObject(with: owner.call("POST", "/v1/events/\(event)/invites",
            body: Data("{}".utf8), contentType: "application/json")) as? [String: Any]
        let url = try XCTUnwrap(invite?["url"] as? String)
        let ok = (service.info["subscriptions"] as? [String: [String: String]])?["ok"] ?? [:]
        let subscription = try JSONSerialization.data(withJSONObject: [
            "endpoint": ok["endpoint"] ?? "", "keys": ["p256dh": ok["p256dh"] ?? "", "auth": ok["auth"] ?? ""]])
        let visibleText = "Lunch is served in the crew tent", hiddenText = "Crew change at gate 2 moved to 14:30"
        let frozenText = "Radio check on channel 4 at 15:00"

        guard let browser = try BrowserScript.start("app-background-browser-test.py", [
            "--url", server.http, "--invite", url, "--subscription", String(decoding: subscription, as: UTF8.self),
            "--hand-over-ms", "3000", "--visible-text", visibleText, "--hidden-text", hiddenText, "--frozen-text", frozenText,
            "--signals", dir.path]) else { return }
        defer { browser.stop() }
        func reached(_ marker: String) -> Bool { browser.reached(marker, timeout: 120) }
        func say(_ signal: String) { FileManager.default.createFile(atPath: dir.appendingPathComponent(signal).path, contents: nil) }

        guard reached("LIVE") else { return }
        let phone = try XCTUnwrap(try fixture.store.conn.query("SELECT id FROM profiles WHERE display_name = 'Pia Pocket'").uuid(0, 0))
        let subscriptions = try fixture.store.pushSubscriptionIDs(user: phone)
        XCTAssertEqual(subscriptions.count, 1, "the phone's push subscription, registered for the app's token")
        let sub = try XCTUnwrap(subscriptions.first).uuidString.lowercased()
        let pia = phone.uuidString.lowercased()
        // Pushes are decided on the presence table (each server writes its own every 3 s).
        XCTAssertTrue(try waitUntil(15) { try self.present(pia) }, "the phone's WebSocket in the presence table")
        XCTAssertTrue(try connected(owner, pia), "reach counts the visible phone connected")

        // Visible: live, and not pushed.
        let visible = try owner.sendMessage(event: fixture.event, message: visibleText, type: nil, priority: nil, expiresInMinutes: nil)
        guard reached("GOT_LIVE") else { return }
        XCTAssertTrue(try waitUntil(15) {
            try fixture.count("SELECT count(*) FROM staff_messages WHERE seq > (SELECT seq FROM fanout_cursor)") == 0
        }, "the message's pushes were decided (the fanout cursor is past it)")
        XCTAssertEqual(try pushes(visible.id, sub), 0, "a push was queued for the phone while it was visible and live")
        XCTAssertEqual(try reachedVia(visible.id, pia), ["live"])

        // Hidden past the hand-over wait: not connected, and the next normal message is pushed.
        say("HIDE")
        guard reached("PARKED") else { return }
        XCTAssertTrue(try waitUntil(10) { try !self.connected(owner, pia) }, "reach still counts the hidden phone connected")
        XCTAssertTrue(try waitUntil(15) { try !self.present(pia) }, "the hidden phone is still in the presence table")
        let hidden = try owner.sendMessage(event: fixture.event, message: hiddenText, type: nil, priority: nil, expiresInMinutes: nil)
        let got = service.wait { self.pushedMessageID($0) == hidden.id.uuidString.lowercased() }
        XCTAssertEqual(got.count, 1, "the message sent while hidden was not pushed to the phone")
        XCTAssertEqual((got.first?["headers"] as? [String: String])?["urgency"], "normal")
        XCTAssertEqual(try pushes(hidden.id, sub), 1)
        XCTAssertTrue(try waitUntil(10) { try self.reachedVia(hidden.id, pia) == ["push"] }, "the funnel says push, not live")
        XCTAssertFalse(try connected(owner, pia), "the hidden phone reconnected (a retry) instead of staying handed over")

        // Shown again: it reconnects at once and catches up.
        say("SHOW")
        guard reached("CAUGHT_UP") else { return }
        XCTAssertTrue(try waitUntil(10) { try self.connected(owner, pia) }, "reach counts the shown phone connected again")

        // Hidden with a long wait, then frozen by the browser: no timer runs in a frozen page, so
        // the app hands over at the freeze event.
        say("FREEZE")
        guard reached("FROZEN") else { return }
        XCTAssertTrue(try waitUntil(10) { try !self.connected(owner, pia) }, "reach still counts the frozen phone connected")
        XCTAssertTrue(try waitUntil(15) { try !self.present(pia) }, "the frozen phone is still in the presence table")
        let frozen = try owner.sendMessage(event: fixture.event, message: frozenText, type: nil, priority: nil, expiresInMinutes: nil)
        XCTAssertEqual(service.wait { self.pushedMessageID($0) == frozen.id.uuidString.lowercased() }.count, 1,
                       "the message sent while frozen was not pushed to the phone")
        say("RESUME")
        guard reached("RESUMED") else { return }
        XCTAssertTrue(try waitUntil(10) { try self.connected(owner, pia) }, "reach counts the resumed phone connected again")
        say("DONE")
        // The phone is lost: its sign-in is revoked (as `staffcast admin token revoke` does).
        guard reached("REVOKE_ME") else { return }
        XCTAssertGreaterThan(try fixture.store.revokeTokens(ofUser: phone, token: nil, managedBy: nil), 0)
        browser.finish(within: 60)
        print(browser.output.text)
    }

    /// The id of the message a request to the test push service's "ok" subscription carried (decrypted).
    private func pushedMessageID(_ request: [String: Any]) -> String? {
        guard (request["path"] as? String)?.hasPrefix("/ok/") == true, let text = request["plaintext"] as? String,
              let frame = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else { return nil }
        return (frame["message"] as? [String: Any])?["id"] as? String
    }

    /// Whether GET /v1/events/{id}/reach counts `user` connected (this server's sockets and others' presence).
    private func connected(_ owner: APIClient, _ user: String) throws -> Bool {
        let body = try JSONSerialization.jsonObject(with: owner.call("GET", "/v1/events/\(fixture.event.uuidString.lowercased())/reach"))
            as? [String: Any]
        let offline = (body?["offline"] as? [[String: Any]] ?? []).compactMap { $0["user_id"] as? String }
        return !offline.contains(user)
    }

    private func present(_ user: String) throws -> Bool {
        try fixture.count("SELECT count(*) FROM presence WHERE user_id = $1 AND event_id = $2",
                          [user, fixture.event.uuidString.lowercased()]) > 0
    }

    private func pushes(_ message: UUID, _ subscription: String) throws -> Int {
        try fixture.count("SELECT count(*) FROM outbox WHERE kind = 'push' AND message_id = $1 AND subscription_id = $2",
                          [message.uuidString.lowercased(), subscription])
    }

    private func reachedVia(_ message: UUID, _ user: String) throws -> [String] {
        let rows = try fixture.store.conn.query("SELECT via FROM message_reach WHERE message_id = $1 AND user_id = $2 ORDER BY via",
                                           [message.uuidString.lowercased(), user])
        return (0..<rows.rowCount).compactMap { rows.string($0, 0) }
    }
}
