import Foundation
import StaffcastClient
import StaffcastCore
@testable import StaffcastPostgres
import XCTest

/// The web console in a real browser: headless Chromium driven by Selenium
/// (`scripts/console-browser-test.py`, a child process) against a real server. The script signs
/// in and sends an urgent alert; this test's staff WebSocket must receive it and mark it read,
/// and the page must show the read. Then the page sends to team Security (made here over HTTP),
/// a Yes/No poll this test answers over the WebSocket, and a safety check it answers "I need
/// help" over HTTP; the page shows the tallies, the help alert and the delivery funnel. Screenshots go to `.build/console.png` and
/// `.build/console-phone.png`. Chromium, chromedriver and python's selenium are required (make
/// test installs them): without them the test fails, it never skips.
final class ConsoleBrowserTests: IntegrationTestCase {
    override class var startsServer: Bool { true }

    func testTheConsoleSendsAnAlertAndSeesItRead() throws {
        let fm = FileManager.default
        // A team for the page's "To" control, made over HTTP as an organiser would: Security, with
        // Sam Staff in it.
        let base = "/v1/events/\(fixture.event.uuidString.lowercased())"
        let owner = try server.api(fixture.ownerToken)
        let made = try owner.raw("POST", base + "/teams", body: Data(#"{"name":"Security"}"#.utf8), contentType: "application/json")
        XCTAssertEqual(made.status, 201, String(decoding: made.body, as: UTF8.self))
        XCTAssertEqual(try owner.raw("PUT", base + "/teams/Security/members/\(fixture.staff.uuidString.lowercased())").status, 201)
        // A template that is an emergency for Security: picking it in the page must carry its
        // type, and show its team in "To".
        _ = try fixture.store.createTemplate(as: fixture.owner, name: "evacuate", SendRequest(
            eventID: fixture.event, message: "Evacuate now by the nearest exit", messageType: "emergency", priority: "urgent")
            .withTeams(["Security"]))
        let staff = try server.connect(fixture.staffToken)
        defer { staff.close() }
        _ = try staff.subscribe(fixture.event)

        let text = "Evacuate hall B now \(UUID().uuidString.prefix(6))"
        let screenshot = TestDatabase.packageRoot.appendingPathComponent(".build/console.png").path
        guard let browser = try BrowserScript.start("console-browser-test.py", [
            "--url", server.http, "--token", fixture.ownerToken, "--message", text, "--screenshot", screenshot]) else { return }
        defer { browser.stop() }
        let output = browser.output

        // The browser's alert reaches staff over the WebSocket; staff read it.
        let frame = try browser.expect("message", on: staff, timeout: 90)
        let message = try XCTUnwrap(frame.message, "\(frame)\n\(output.text)")
        XCTAssertEqual(message.message, text)
        XCTAssertEqual(message.priority, .urgent)
        XCTAssertEqual(message.messageType, .alert)
        try staff.send(["op": "mark_read", "message_id": message.id.uuidString.lowercased()])
        _ = try staff.expect("read")
        // And answers it: the console shows the reply live.
        try staff.send(["op": "reply", "message_id": message.id.uuidString.lowercased(), "status": "on_my_way"])
        _ = try staff.expect("replied")

        // The page sends to team Security: staff (a member) gets it with its audience, and the
        // server stored it so (read back over HTTP).
        let team = try XCTUnwrap(try browser.expect("message", on: staff, timeout: 60).message, output.text)
        XCTAssertTrue(team.message.hasPrefix("Security to the north gate"), team.message)
        XCTAssertEqual(team.teams, ["Security"])
        guard browser.reached("TEAM \(team.id.uuidString.lowercased())", timeout: 30) else { return }
        let listed = try owner.raw("GET", base + "/messages", query: ["since_seq": "0", "limit": "200"])
        XCTAssertEqual(listed.status, 200)
        let messages = try XCTUnwrap((try JSONSerialization.jsonObject(with: listed.body) as? [String: Any])?["messages"] as? [[String: Any]])
        let stored = try XCTUnwrap(messages.first { ($0["id"] as? String) == team.id.uuidString.lowercased() }, "\(messages)")
        XCTAssertEqual(stored["teams"] as? [String], ["Security"])

        // A Yes/No poll from the page: staff answers Yes over the WebSocket (the page shows the tally).
        let poll = try XCTUnwrap(try browser.expect("message", on: staff, timeout: 60).message, output.text)
        XCTAssertEqual(poll.poll?.options, ["Yes", "No"])
        XCTAssertEqual(poll.teams, [])
        // Answered once the page shows it unanswered (so the page sees the tally change).
        guard browser.reached("POLL \(poll.id.uuidString.lowercased())", timeout: 30) else { return }
        try staff.send(["op": "answer", "message_id": poll.id.uuidString.lowercased(), "option": 0])
        _ = try staff.expect("answered")
        // A read storm while the poll's receipts panel is open: 40 people read it at once, one
        // `receipt` frame each; the page must not ask for the receipts 40 times.
        guard browser.reached("STORM", timeout: 60) else { return }
        let readers = try (0..<40).map { try fixture.person("Reader \($0)").id }
        XCTAssertEqual(try fixture.store.markReadBatch(readers.map { Store.PendingRead(user: $0, message: poll.id) }).compactMap { $0 }.count, 40)

        // The safety check: staff needs help, answered over HTTP; the page raises an alert.
        let safe = try XCTUnwrap(try browser.expect("message", on: staff, timeout: 90).message, output.text)
        XCTAssertEqual(safe.poll?.options, Poll.safetyOptions)
        guard browser.reached("SAFE \(safe.id.uuidString.lowercased())", timeout: 30) else { return }
        let answered = try server.api(fixture.staffToken).raw("POST", "/v1/messages/\(safe.id.uuidString.lowercased())/answers",
                                                              body: Data(#"{"option":1}"#.utf8), contentType: "application/json")
        XCTAssertEqual(answered.status, 201, String(decoding: answered.body, as: UTF8.self))

        // The page asks for a server restart to show that it reconnects and catches up.
        guard browser.reached("RESTART", timeout: 150) else { return }
        let port = server.port
        server.stop()
        sleep(1) // the page is away for a moment (it reconnects with backoff): what is tested is the catch-up
        _ = try fixture.store.send(as: fixture.owner, SendRequest(eventID: fixture.event, message: "Sent while the console was away"))
        // Someone needs help while the console is away: the alert and the tally come with the catch-up.
        let away = try fixture.person("Li Away").id
        XCTAssertEqual(try fixture.store.answerBatch([Store.PendingAnswer(user: away, message: safe.id, option: 1)]).count, 1)
        server = try TestServer(conninfo: fixture.conninfo) { $0.port = port }

        browser.finish(within: 120)
        XCTAssertTrue(fm.fileExists(atPath: screenshot), "no screenshot at \(screenshot)")
        // The invite page joined a new staff member.
        XCTAssertEqual(try fixture.count("""
            SELECT count(*) FROM profiles p JOIN event_access a ON a.user_id = p.id
            WHERE p.display_name = 'Browser Joiner' AND a.access_level = 'staff'
            """), 1)
        print(output.text)
    }

    func testTheConsoleIsServedWithAStrictPolicy() throws {
        // backoff.js and subscribe-url.js: the files both pages share, served under /console/ too.
        let modules = ["core", "socket", "messages", "people", "send", "invites"].map { "/console/console-\($0).js" } + ["/console/backoff.js", "/console/subscribe-url.js"]
        for path in ["/console", "/console/console.js", "/console/console.css", "/join/AAAAAAAAAAAAAAAAAAAAAA"] + modules {
            let r = try server.api(nil).raw("GET", path)
            XCTAssertEqual(r.status, 200, path)
        }
        let page = try server.api(nil).raw("GET", "/console")
        let html = String(decoding: page.body, as: UTF8.self)
        XCTAssertTrue(html.contains("<script src=\"/console/console.js\""))
        // Nothing from another origin: every src and href is local (or data:).
        for attribute in ["src=\"", "href=\""] {
            for part in html.components(separatedBy: attribute).dropFirst() {
                XCTAssertTrue(part.hasPrefix("/") || part.hasPrefix("data:") || part.hasPrefix("#"), "\(attribute)\(part.prefix(40))")
            }
        }
        XCTAssertFalse(html.contains("<script>"), "no inline script")
        XCTAssertEqual(try server.api(nil).raw("GET", "/console/other.js").status, 404)
        // The policy header (checked on the raw response).
        let socket = try RawSocket(port: server.port)
        defer { socket.close() }
        try socket.send("GET /console HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        let response = try socket.readResponse(deadline: Date().addingTimeInterval(5))
        let policy = try XCTUnwrap(response.header("content-security-policy"))
        XCTAssertTrue(policy.hasPrefix("default-src 'none'; script-src 'self'; style-src 'self'"), policy)
        XCTAssertEqual(response.header("x-content-type-options"), "nosniff")
    }

    /// The console's files (Web/Assets, compiled in) come with their content type and an ETag;
    /// asking again with that tag answers 304 with no body on the same keep-alive connection.
    func testTheConsoleFilesAreServedFromTheBinaryWithAValidator() throws {
        let socket = try RawSocket(port: server.port)
        defer { socket.close() }
        let files = [("/console", "text/html; charset=utf-8", "<!doctype html>"),
                     ("/console/console.js", "text/javascript; charset=utf-8", "\"use strict\";"),
                     ("/console/console.css", "text/css; charset=utf-8", ":root")]
        for (path, type, start) in files {
            try socket.send("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            let first = try socket.readResponse(deadline: Date().addingTimeInterval(5))
            XCTAssertEqual(first.status, 200, path)
            XCTAssertEqual(first.header("content-type"), type, path)
            XCTAssertEqual(first.header("cache-control"), "no-cache", path)
            XCTAssertNotNil(first.header("content-security-policy"), path)
            XCTAssertTrue(first.bodyText.contains(start), "\(path): \(first.bodyText.prefix(80))")
            let tag = try XCTUnwrap(first.header("etag"), path)
            XCTAssertTrue(tag.hasPrefix("\"") && tag.hasSuffix("\"") && tag.count == 18, tag)

            try socket.send("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nIf-None-Match: W/\"x\", \(tag)\r\n\r\n")
            let again = try socket.readResponse(deadline: Date().addingTimeInterval(5))
            XCTAssertEqual(again.status, 304, path)
            XCTAssertEqual(again.header("etag"), tag, path)
            XCTAssertNil(again.header("content-length"), path)

            try socket.send("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nIf-None-Match: \"0000000000000000\"\r\n\r\n")
            let stale = try socket.readResponse(deadline: Date().addingTimeInterval(5))
            XCTAssertEqual(stale.status, 200, path)
            XCTAssertEqual(stale.body, first.body, path)
        }
    }
}

/// Collects a child's output from any thread and waits for a line in it.
final class OutputCollector: @unchecked Sendable {
    private let lock = NSLock()
    private var data = Data()
    func append(_ d: Data) { lock.lock(); data.append(d); lock.unlock() }
    var text: String { lock.lock(); defer { lock.unlock() }; return String(decoding: data, as: UTF8.self) }
    func wait(for line: String, timeout: TimeInterval) -> Bool {
        waitUntil(timeout) { has(line) }
    }
    /// Whether `line` has been printed on a line of its own.
    func has(_ line: String) -> Bool {
        let text = text
        return text.contains("\n" + line + "\n") || text.hasPrefix(line + "\n")
    }
}

