import Foundation
import StaffcastClient
import StaffcastCore
import StaffcastPostgres
import XCTest

/// `/readyz` tells the truth: it answers 503 within seconds of the database going silent
/// (every packet dropped, nothing refused: TCP and libpq notice nothing for a long time), and
/// 200 again once it answers; an unauthenticated answer holds short words only. The database
/// is reached through a `SilentProxy`, so the shared test cluster itself is never paused.
final class ReadinessTests: IntegrationTestCase {
    var proxy: SilentProxy!

    override func setUpWithError() throws {
        try super.setUpWithError()
        proxy = try SilentProxy(forwardingTo: fixture.conninfo)
    }

    override func tearDown() {
        proxy?.stop()
        super.tearDown()
    }

    func readyz(_ server: TestServer) throws -> RawHTTPResponse {
        try RawSocket.get(port: server.port, "/readyz", timeout: 5)
    }

    /// Polls `/readyz` until it answers `status`; the seconds it took, or nil at the deadline.
    func waitForReadyz(_ server: TestServer, _ status: Int, within seconds: TimeInterval) throws -> TimeInterval? {
        let start = Date()
        return try waitUntil(seconds) { try readyz(server).status == status } ? Date().timeIntervalSince(start) : nil
    }

    func testReadyzTurns503WhileTheDatabaseIsSilentAnd200WhenItAnswersAgain() throws {
        let server = try TestServer(conninfo: proxy.conninfo(fixture.conninfo))
        defer {
            proxy.resume() // a failure while silent must not leave the server's stop waiting on it
            server.stop()
        }
        let ready = try readyz(server)
        XCTAssertEqual(ready.status, 200, "\(ready)")
        XCTAssertEqual(ready.json?["ready"] as? Bool, true)
        XCTAssertEqual(ready.json?["database"] as? String, "up")
        XCTAssertEqual(ready.json?["listener"] as? String, "listening")

        proxy.pause()
        let wentDown = try waitForReadyz(server, 503, within: 15)
        XCTAssertNotNil(wentDown, "/readyz still said ready 15 s after the database went silent")
        let down = try readyz(server)
        XCTAssertEqual(down.status, 503)
        XCTAssertEqual(down.json?["ready"] as? Bool, false, "\(down)")
        XCTAssertEqual(down.json?["database"] as? String, "down", "\(down)")
        XCTAssertEqual(Set(down.json?.keys.map { $0 } ?? []), ["ready", "database", "listener", "state"], "\(down)")
        for secret in [proxy.directory, "/tmp", "PGSQL", "socket", "connection", "libpq", "timeout"] {
            XCTAssertFalse(down.bodyText.contains(secret), "an unauthenticated answer shows '\(secret)': \(down.bodyText)")
        }
        // It stays down while silent, and the process itself still serves.
        usleep(1_500_000) // several probe intervals of silence: that it stays 503 through them is tested
        XCTAssertEqual(try readyz(server).status, 503)
        XCTAssertEqual(try RawSocket.get(port: server.port, "/healthz", timeout: 5).status, 200)

        proxy.resume()
        XCTAssertNotNil(try waitForReadyz(server, 200, within: 20), "/readyz did not say ready again after the database answered")
        let back = try readyz(server)
        XCTAssertEqual(back.json?["database"] as? String, "up", "\(back)")
        // And the server works again: a send is stored.
        let r = try server.api(fixture.ownerToken).raw("POST", "/v1/events/\(fixture.event.uuidString.lowercased())/messages",
                                                       body: Data("after the silence".utf8), contentType: "text/plain")
        XCTAssertEqual(r.status, 201)
        XCTAssertEqual(fixture.messageCount, 1)
    }
}
