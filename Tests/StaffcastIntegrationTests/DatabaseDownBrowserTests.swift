import Foundation
import StaffcastClient
import StaffcastCore
import StaffcastPostgres
import XCTest

/// The staff app and the console in a real browser (`scripts/database-down-browser-test.py`)
/// while the database goes away and comes back, on a cluster of its own (it is stopped). With
/// the database down, a page whose WebSocket reconnects gets `unavailable` for its subscribe:
/// the console must say it is not live and subscribe again by itself, the app must wait longer
/// each time (not every 500 ms); both must show the message sent once it is back. Before that,
/// an unread message expiring in the app leaves its unread count, and the message sent at the
/// end is in Hebrew: both pages lay its text and options out right to left.
final class DatabaseDownBrowserTests: XCTestCase {
    func testThePagesSubscribeAgainWhenTheDatabaseComesBack() throws {
        let cluster = try OwnCluster("sc-web-down")
        defer { cluster.remove() }
        let fixture = try Fixture(conninfo: cluster.conninfo)
        // Two unread messages for the phone, one of them expiring while it is open (a minute is
        // the shortest a sender can ask for: the test shortens it before the server reads it).
        // 30 s: the app drops expired messages every 30 s from its start, which comes after
        // this, so its first sweep already finds it expired (at 40 s it often came a sweep later).
        let expiring = try fixture.store.send(as: fixture.owner, SendRequest(
            eventID: fixture.event, message: "Shuttle leaves from gate 2", expiresInMinutes: 1))
        _ = try fixture.store.send(as: fixture.owner, SendRequest(eventID: fixture.event, message: "Lunch is in tent C"))
        _ = try PGConnection(conninfo: cluster.conninfo).query(
            "UPDATE staff_messages SET expires_at = now() + interval '30 seconds' WHERE id = $1", [expiring.id.uuidString.lowercased()])
        let server = try TestServer(conninfo: cluster.conninfo)
        defer { server.stop() }
        let owner = try server.api(fixture.ownerToken)
        let event = fixture.event.uuidString.lowercased()
        let invite = try JSONSerialization.jsonObject(with: owner.call("POST", "/v1/events/\(event)/invites",
            body: Data("{}".utf8), contentType: "application/json")) as? [String: Any]
        let url = try XCTUnwrap(invite?["url"] as? String)

        guard let browser = try BrowserScript.start("database-down-browser-test.py", [
            "--url", server.http, "--invite", url, "--token", fixture.ownerToken,
            "--screenshots", TestDatabase.packageRoot.appendingPathComponent(".build").path]) else { return }
        defer { browser.stop() }

        guard browser.reached("STOP_DATABASE", timeout: 120) else { return }
        try cluster.cluster.stop()
        guard browser.reached("START_DATABASE", timeout: 180) else { return }
        try cluster.cluster.ensureRunning(detached: true)
        XCTAssertTrue(try waitUntil(30, poll: 0.2) { try server.api(nil).raw("GET", "/readyz").status == 200 })
        // Hebrew: the door to the north is open; a poll of yes / no.
        let body = #"{"message":"הדלת הצפונית פתוחה","poll":{"options":["כן","לא"]}}"#
        let sent = try owner.raw("POST", "/v1/events/\(event)/messages", body: Data(body.utf8), contentType: "application/json")
        XCTAssertEqual(sent.status, 201, String(decoding: sent.body, as: UTF8.self))

        browser.finish(within: 150)
        print(browser.output.text)
    }
}
