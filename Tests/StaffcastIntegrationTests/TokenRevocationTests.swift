import Foundation
import StaffcastClient
import StaffcastCore
import StaffcastPostgres
import StaffcastServer
import XCTest

/// Tokens decided from memory: a revoke reaches every server within 2 s (open WebSockets
/// closed with 4401, new upgrades and HTTP calls refused with 401), and a token issued while
/// the servers run works within 2 s, with no database call at the upgrade.
final class TokenRevocationTests: IntegrationTestCase {
    func start() throws -> TestServer {
        try startServer { $0.serviceThreads = 2 }
    }

    func testARevokedTokenClosesItsSocketsWith4401OnEveryServerWithinTwoSeconds() throws {
        let token = try fixture.store.issueToken(user: fixture.staff) // loaded at start
        let a = try start()
        let b = try start()
        let onA = try a.connect(token)
        let onB = try b.subscriber(token, fixture.event)
        let other = try b.connect(fixture.staffToken) // another token of the same user stays
        let started = Date()
        XCTAssertEqual(try fixture.store.revokeTokens(user: fixture.staff), 2)
        for socket in [onA, onB] {
            XCTAssertEqual(try socket.closeCode(idle: 2.5), 4401, "the socket was not closed")
        }
        XCTAssertLessThan(Date().timeIntervalSince(started), 2.5)
        // Both tokens of the user were revoked: the second socket is closed too.
        XCTAssertEqual(try other.closeCode(idle: 2.5), 4401, "the other token was revoked too; its socket must close")
        // New upgrades and HTTP calls with it are refused on both servers.
        for server in [a, b] {
            XCTAssertThrowsError(try WebSocketClient(url: server.ws, headers: ["Authorization": "Bearer \(token)"]))
            let r = try server.api(token).raw("GET", "/v1/me/events")
            XCTAssertEqual(r.status, 401)
        }
    }

    func testATokenIssuedWhileServingWorksWithinTwoSeconds() throws {
        let a = try start()
        let token = try fixture.store.issueToken(user: fixture.staff)
        var connected: TestSocket?
        waitUntil(2, poll: 0.05) {
            connected = (try? WebSocketClient(url: a.ws, headers: ["Authorization": "Bearer \(token)"])).map(TestSocket.init)
            return connected != nil
        }
        let socket = try XCTUnwrap(connected, "a new token must work within 2 s")
        guard case .hello(let user, _, _, _) = try socket.next() else { return XCTFail("expected hello") }
        XCTAssertEqual(user.userID, fixture.staff)
    }

    func testAnExpiringTokenClosesItsSocketAndIsRefusedAfterwards() throws {
        let a = try start()
        let known = a.validTokens
        let token = try fixture.store.issueToken(user: fixture.staff, expiresIn: 2)
        XCTAssertTrue(waitUntil(2) { a.validTokens > known }, "the new token never reached the server's table")
        let socket = try a.connect(token)
        XCTAssertEqual(try socket.closeCode(idle: 4), 4401, "the socket of an expired token must be closed")
        XCTAssertThrowsError(try WebSocketClient(url: a.ws, headers: ["Authorization": "Bearer \(token)"]))
        XCTAssertEqual(try a.api(token).raw("GET", "/v1/me/events").status, 401)
    }
}
