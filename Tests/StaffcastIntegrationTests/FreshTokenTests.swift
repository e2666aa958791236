import Foundation
import StaffcastClient
import StaffcastCore
import StaffcastPostgres
import XCTest

/// A token works on its first use, over HTTP and WebSocket, on every server, as soon as the
/// call that issued it returned (docs/protocol.md, "Fresh tokens"): a server that has not read
/// it from the token change log yet looks it up once, off its loops, instead of answering 401.
/// Wrong tokens still get 401, and guessing stays bounded per address.
final class FreshTokenTests: IntegrationTestCase {
    var a: TestServer!
    var b: TestServer!

    override func setUpWithError() throws {
        try super.setUpWithError()
        a = try startServer()
        b = try startServer()
    }

    func httpStatus(_ server: TestServer, _ token: String) throws -> Int {
        try RawSocket.get(port: server.port, "/v1/me/events", headers: [("Authorization", "Bearer \(token)")], timeout: 10).status
    }

    func upgradeStatus(_ server: TestServer, _ token: String) throws -> Int {
        let socket = try RawSocket(port: server.port)
        defer { socket.close() }
        return try socket.upgrade(token: token).status
    }

    func testThirtyOfThirtyFreshTokensWorkOnFirstUseOverHTTPAndWebSocketOnTwoServers() throws {
        var refused: [String] = []
        for i in 0..<30 {
            let user = try fixture.store.createUser(name: "Fresh \(i)")
            try fixture.store.grant(event: fixture.event, user: user, level: .staff)
            let token = try fixture.store.issueToken(user: user) // what `staffcast admin token issue` runs
            // First use at once: over HTTP on one server, over WebSocket on the other.
            let (http, ws) = i % 2 == 0 ? (a!, b!) : (b!, a!)
            let h = try httpStatus(http, token)
            if h != 200 { refused.append("token \(i): HTTP \(h)") }
            let w = try upgradeStatus(ws, token)
            if w != 101 { refused.append("token \(i): WebSocket \(w)") }
        }
        XCTAssertEqual(refused, [], "\(refused.count) of 60 first uses refused")
    }

    func testATokenFromAnInviteRedeemedOnOneServerWorksAtOnceOnTheOther() throws {
        let invite = try a.api(fixture.ownerToken).raw("POST", "/v1/events/\(fixture.event.uuidString.lowercased())/invites",
                                                       body: Data(#"{"max_uses": 5}"#.utf8), contentType: "application/json")
        XCTAssertEqual(invite.status, 201)
        let code = try XCTUnwrap((try JSONSerialization.jsonObject(with: invite.body) as? [String: Any])?["code"] as? String)
        for i in 0..<5 {
            let joined = try a.api(nil).raw("POST", "/v1/invites/\(code)/redeem", body: Data(#"{"display_name": "Joiner \#(i)"}"#.utf8),
                                            contentType: "application/json")
            XCTAssertEqual(joined.status, 201)
            let token = try XCTUnwrap((try JSONSerialization.jsonObject(with: joined.body) as? [String: Any])?["token"] as? String)
            let other = i % 2 == 0 ? b! : a!
            XCTAssertEqual(try upgradeStatus(other, token), 101, "joiner \(i) over WebSocket")
            XCTAssertEqual(try httpStatus(i % 2 == 0 ? a! : b!, token), 200, "joiner \(i) over HTTP")
            // And a real client: hello, then subscribe.
            let socket = try other.subscriber(token, fixture.event)
            socket.close()
        }
    }

    func testWrongTokensStillGet401() throws {
        let wrong = TokenHasher.generate()
        for server in [a!, b!] {
            XCTAssertEqual(try httpStatus(server, wrong), 401)
            XCTAssertEqual(try httpStatus(server, wrong), 401, "again (answered from memory)")
            XCTAssertEqual(try upgradeStatus(server, wrong), 401)
            XCTAssertEqual(try httpStatus(server, "sc_not-a-token"), 401)
        }
        // A revoked token: 401 once the revoke has reached the server (within 2 s, as before),
        // and a lookup never brings it back, on either server, however often it is tried.
        let user = try fixture.store.createUser(name: "Revoked")
        let revoked = try fixture.store.issueToken(user: user)
        try fixture.store.revokeToken(revoked)
        for server in [a!, b!] {
            try waitUntil(5, poll: 0.05) { try httpStatus(server, revoked) == 401 }
            for _ in 0..<5 {
                XCTAssertEqual(try httpStatus(server, revoked), 401)
                XCTAssertEqual(try upgradeStatus(server, revoked), 401)
            }
        }
    }

    /// 300 random well-formed tokens from one address at once: each is 401, 429 (the address
    /// looked up too many unknown tokens) or 503 (too many lookups at once), never anything
    /// else; the database is asked at most the burst plus the refill, and the server keeps
    /// answering.
    func testGuessingTokensIsRateLimited() throws {
        let started = Date()
        var sockets: [RawSocket] = []
        for _ in 0..<20 {
            let socket = try RawSocket(port: a.port)
            var bytes: [UInt8] = []
            for _ in 0..<15 {
                bytes += RawSocket.request("GET", "/v1/me/events", port: a.port,
                                           headers: [("Authorization", "Bearer \(TokenHasher.generate())")])
            }
            try socket.send(bytes)
            sockets.append(socket)
        }
        var statuses: [Int: Int] = [:]
        for socket in sockets {
            for _ in 0..<15 {
                statuses[try socket.readResponse(deadline: Date().addingTimeInterval(20)).status, default: 0] += 1
            }
            socket.close()
        }
        let elapsed = Date().timeIntervalSince(started)
        XCTAssertEqual(statuses.values.reduce(0, +), 300)
        XCTAssertEqual(Set(statuses.keys).subtracting([401, 429, 503]), [], "\(statuses)")
        XCTAssertGreaterThan(statuses[429, default: 0], 0, "no guess was rate limited: \(statuses)")
        let limits = TokenLookups<Int>.Limits()
        let metrics = String(decoding: try a.api(nil).call("GET", "/metrics"), as: UTF8.self)
        let lookups = ["valid", "not_valid", "failed"].map { result in
            metrics.split(separator: "\n").first { $0.hasPrefix("staffcast_token_lookups_total{result=\"\(result)\"}") }
                .flatMap { $0.split(separator: " ").last.flatMap { Double($0) } } ?? 0
        }.reduce(0, +)
        XCTAssertGreaterThan(lookups, 0, "\(metrics)")
        XCTAssertLessThanOrEqual(lookups, limits.burst + limits.perSecond * elapsed + 1, "lookups of guessed tokens are bounded")
        XCTAssertEqual(try RawSocket.get(port: a.port, "/healthz", timeout: 5).status, 200)
        XCTAssertEqual(try httpStatus(b, fixture.staffToken), 200, "other servers are not affected")
    }
}
