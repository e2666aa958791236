import Crypto
import Foundation
import StaffcastClient
import StaffcastCore
@testable import StaffcastPostgres
import XCTest

/// The staff app (`/app`) in a real browser at a phone's size: headless Chromium driven by
/// Selenium (`scripts/app-browser-test.py`, a child process) against a real server. The page
/// opens an invite link and lands in the app signed in; this test sends it messages as the
/// organiser and checks, through the HTTP API, what the phone did (read, replied, acknowledged);
/// then stops the server, stores messages meanwhile (more than one catch-up page) and starts it
/// again: the app, reloaded offline from its service worker's cache, must show all of them once,
/// in order. Screenshots go to `.build/app-*.png`. Chromium, chromedriver, selenium and
/// axe-selenium-python are required (make test installs them): without them it fails, never skips.
final class AppBrowserTests: IntegrationTestCase {
    override class var startsServer: Bool { true }

    func testAPhoneJoinsReadsRepliesAcknowledgesAndCatchesUp() throws {
        let owner = try server.api(fixture.ownerToken)
        let event = fixture.event.uuidString.lowercased()
        let invite = try JSONSerialization.jsonObject(with: owner.call("POST", "/v1/events/\(event)/invites",
            body: Data("{}".utf8), contentType: "application/json")) as? [String: Any]
        let url = try XCTUnwrap(invite?["url"] as? String)
        // The next person to use the same phone.
        let second = try JSONSerialization.jsonObject(with: owner.call("POST", "/v1/events/\(event)/invites",
            body: Data("{}".utf8), contentType: "application/json")) as? [String: Any]
        let secondURL = try XCTUnwrap(second?["url"] as? String)
        let missed = 1_030  // more than the 1,000 a subscribe replays: the app must page
        // A zone whose post has a printed check-in link (`staffcast team checkin-link`).
        _ = try owner.call("POST", "/v1/events/\(event)/teams", body: Data(#"{"name":"Gate 3","kind":"zone"}"#.utf8),
                           contentType: "application/json")

        guard let browser = try BrowserScript.start("app-browser-test.py", [
            "--url", server.http, "--invite", url, "--checkin", "\(server.http)/checkin/\(event)/Gate%203",
            "--missed", String(missed), "--second-invite", secondURL, "--screenshots", TestDatabase.packageRoot.appendingPathComponent(".build").path]) else { return }
        defer { browser.stop() }
        let output = browser.output
        func reached(_ marker: String, _ timeout: TimeInterval = 120) -> Bool { browser.reached(marker, timeout: timeout) }

        guard reached("JOINED") else { return }
        let phoneUser = try fixture.count("""
            SELECT count(*) FROM profiles p JOIN event_access a ON a.user_id = p.id
            WHERE p.display_name = 'Pat Phone' AND a.access_level = 'staff' AND a.event_id = $1
            """, [event])
        XCTAssertEqual(phoneUser, 1, "the invite made Pat Phone a staff member")

        // The QR code at a post: the phone checked in to the zone from its link.
        guard reached("CHECKED_IN") else { return }
        let members = try JSONSerialization.jsonObject(with: owner.call("GET", "/v1/events/\(event)/teams/Gate 3/members")) as? [String: Any]
        XCTAssertEqual((members?["members"] as? [[String: Any]])?.compactMap { $0["display_name"] as? String }, ["Pat Phone"])

        // A live message: the phone marks it read and replies; the organiser sees both.
        let high = try owner.sendMessage(event: fixture.event, message: "Gate 4 needs two more stewards",
                                         type: "alert", priority: "high", expiresInMinutes: nil)
        guard reached("BANNER") else { return }
        _ = try owner.editMessage(high.id, text: "Gate 4 needs three more stewards")
        guard reached("READ_AND_REPLIED") else { return }
        XCTAssertTrue(try waitFor("the receipt of Pat Phone's read") {
            try self.names(owner, "/v1/messages/\(high.id.uuidString.lowercased())/receipts", "read_by").contains("Pat Phone")
        })
        XCTAssertTrue(try waitFor("Pat Phone's reply") {
            let body = try JSONSerialization.jsonObject(with: owner.call("GET", "/v1/messages/\(high.id.uuidString.lowercased())/replies")) as? [String: Any]
            return (body?["replies"] as? [[String: Any]] ?? []).contains {
                $0["display_name"] as? String == "Pat Phone" && $0["status"] as? String == "on_my_way"
            }
        })

        // A poll: the phone answers with a button; the organiser's answers show it.
        let pollBody = #"{"message":"Is there water at your gate?","poll":{"options":["Yes","No"]}}"#
        let poll = try JSONSerialization.jsonObject(with: owner.call("POST", "/v1/events/\(event)/messages",
            body: Data(pollBody.utf8), contentType: "application/json")) as? [String: Any]
        let pollID = try XCTUnwrap(poll?["id"] as? String)
        guard reached("ANSWERED") else { return }
        XCTAssertTrue(try waitFor("Pat Phone's answer") {
            let body = try JSONSerialization.jsonObject(with: owner.call("GET", "/v1/messages/\(pollID)/answers")) as? [String: Any]
            return (body?["answers"] as? [[String: Any]] ?? []).contains {
                $0["display_name"] as? String == "Pat Phone" && $0["option"] as? Int == 0
            }
        })

        // An emergency holds the phone's screen until acknowledged (which marks it read).
        let emergency = try owner.sendMessage(event: fixture.event, message: "Evacuate stand B by the north exits",
                                              type: "emergency", priority: "urgent", expiresInMinutes: nil)
        guard reached("ACKNOWLEDGED") else { return }
        XCTAssertTrue(try waitFor("the emergency's receipt") {
            try self.names(owner, "/v1/messages/\(emergency.id.uuidString.lowercased())/receipts", "read_by").contains("Pat Phone")
        })
        // Another emergency, read on Pat's other device: the phone stops ringing (marked_read).
        let shelter = try owner.sendMessage(event: fixture.event, message: "Shelter in place in hall C",
                                           type: "emergency", priority: "urgent", expiresInMinutes: nil)
        guard reached("READ_ELSEWHERE") else { return }
        XCTAssertTrue(try waitFor("the second emergency's receipt") {
            try self.names(owner, "/v1/messages/\(shelter.id.uuidString.lowercased())/receipts", "read_by").contains("Pat Phone")
        })

        // Offline: the server goes away; messages are stored meanwhile; it comes back.
        guard reached("GO_OFFLINE") else { return }
        let port = server.port
        server.stop()
        for i in 1...missed {
            _ = try fixture.store.send(as: fixture.owner, SendRequest(eventID: fixture.event, message: "Missed \(i)"))
        }
        guard reached("RELOADED_OFFLINE") else { return }
        server = try TestServer(conninfo: fixture.conninfo) { $0.port = port }
        guard reached("BACK_ONLINE") else { return }
        _ = try owner.sendMessage(event: fixture.event, message: "After the return", type: nil, priority: nil, expiresInMinutes: nil)

        // The phone changes hands: a message to Pat's zone only, then Sam joins on the same phone.
        guard reached("CAUGHT_UP") else { return }
        _ = try owner.call("POST", "/v1/events/\(event)/messages",
                           body: Data(#"{"message":"Gate 3 only: radio check","teams":["Gate 3"]}"#.utf8), contentType: "application/json")
        guard reached("SHARED_PHONE") else { return }
        XCTAssertEqual(try fixture.count("SELECT count(*) FROM profiles WHERE display_name = 'Sam Second'"), 1)

        browser.finish(within: 180)
        print(output.text)
    }

    func testTheAppIsServedInstallableFromTheBinary() throws {
        let api = try server.api(nil)
        let files: [(String, String)] = [
            ("/app", "text/html; charset=utf-8"), ("/app/", "text/html; charset=utf-8"),
            ("/app/app.js", "text/javascript; charset=utf-8"), ("/app/app-text.js", "text/javascript; charset=utf-8"),
            ("/app/app-state.js", "text/javascript; charset=utf-8"), ("/app/app-socket.js", "text/javascript; charset=utf-8"),
            ("/app/app-render.js", "text/javascript; charset=utf-8"), ("/app/app-push.js", "text/javascript; charset=utf-8"),
            ("/app/app-background.js", "text/javascript; charset=utf-8"), ("/app/backoff.js", "text/javascript; charset=utf-8"),
            ("/app/subscribe-url.js", "text/javascript; charset=utf-8"),
            ("/app/app.css", "text/css; charset=utf-8"), ("/app/sw.js", "text/javascript; charset=utf-8"),
            ("/app/manifest.webmanifest", "application/manifest+json"), ("/app/icon.svg", "image/svg+xml"),
            ("/app/icon-192.png", "image/png"), ("/app/icon-512.png", "image/png"),
            ("/join/AAAAAAAAAAAAAAAAAAAAAA", "text/html; charset=utf-8"),
        ]
        for (path, type) in files {
            let r = try RawSocket.get(port: server.port, path, timeout: 5)
            XCTAssertEqual(r.status, 200, path)
            XCTAssertEqual(r.header("content-type"), type, path)
        }
        XCTAssertEqual(try api.raw("GET", "/join/AAAAAAAAAAAAAAAAAAAAAA").body, try api.raw("GET", "/app").body,
                       "a join link opens the app")
        XCTAssertEqual(try api.raw("GET", "/app/nosuch.js").status, 404)
        let manifest = try XCTUnwrap(JSONSerialization.jsonObject(with: api.raw("GET", "/app/manifest.webmanifest").body) as? [String: Any])
        XCTAssertEqual(manifest["start_url"] as? String, "/app")
        XCTAssertEqual(manifest["display"] as? String, "standalone")
        let icons = manifest["icons"] as? [[String: Any]] ?? []
        XCTAssertTrue(icons.contains { $0["sizes"] as? String == "512x512" } && icons.contains { $0["sizes"] as? String == "192x192" })
        let png = try api.raw("GET", "/app/icon-512.png").body
        XCTAssertEqual(Array(png.prefix(4)), [0x89, 0x50, 0x4E, 0x47], "a PNG")
        // The worker may control /app (outside its folder /app/), and the page the policy.
        let socket = try RawSocket(port: server.port)
        defer { socket.close() }
        try socket.send("GET /app/sw.js HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        let sw = try socket.readResponse(deadline: Date().addingTimeInterval(5))
        XCTAssertEqual(sw.header("service-worker-allowed"), "/app")
        // The worker names this build's shell: every file it keeps, with the SHA-256 of its bytes.
        let shell = try XCTUnwrap(sw.bodyText.range(of: #"const SHELL_FILES = (\{[^}]*\});"#, options: .regularExpression)
            .map { String(sw.bodyText[$0].dropFirst("const SHELL_FILES = ".count).dropLast()) })
        let named = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(shell.utf8)) as? [String: String])
        XCTAssertEqual(Set(named.keys), ["/app", "/app/app.css", "/app/app-text.js", "/app/app.js", "/app/app-state.js",
                                         "/app/app-socket.js", "/app/app-render.js", "/app/app-push.js", "/app/app-background.js",
                                         "/app/backoff.js", "/app/subscribe-url.js", "/app/manifest.webmanifest", "/app/icon.svg",
                                         "/app/icon-192.png"])
        for (path, digest) in named {
            let body = try api.raw("GET", path).body
            XCTAssertEqual(SHA256.hash(data: body).map { String(format: "%02x", $0) }.joined(), digest, path)
        }
        XCTAssertTrue(sw.bodyText.contains(#"const SHELL_VERSION = ""#), "the worker's version")
        try socket.send("GET /app HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        let page = try socket.readResponse(deadline: Date().addingTimeInterval(5))
        let policy = try XCTUnwrap(page.header("content-security-policy"))
        XCTAssertTrue(policy.contains("default-src 'none'") && policy.contains("manifest-src 'self'") && policy.contains("worker-src 'self'"), policy)
        XCTAssertNotNil(page.header("etag"))
        XCTAssertFalse(page.bodyText.contains("<script>"), "no inline script")
    }

    private func names(_ api: APIClient, _ path: String, _ key: String) throws -> [String] {
        let body = try JSONSerialization.jsonObject(with: api.call("GET", path)) as? [String: Any]
        return (body?[key] as? [[String: Any]] ?? []).compactMap { $0["display_name"] as? String }
    }

    /// Polls `condition` until it holds or 15 s have passed.
    private func waitFor(_ what: String, _ condition: () throws -> Bool) throws -> Bool {
        let held = try waitUntil(15, condition)
        if !held { XCTFail("timed out waiting for \(what)") }
        return held
    }
}
