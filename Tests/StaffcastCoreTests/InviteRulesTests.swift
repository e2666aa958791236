import Foundation
@testable import StaffcastCore
import XCTest

/// Invite policy without a database: request validation, the level ceiling, join URLs, the
/// per-address limiter of redeems, and the token a browser offers as a subprotocol.
final class InviteRulesTests: XCTestCase {
    let event = UUID()

    func testRequestDefaultsAndLimits() throws {
        let empty = try InviteRequest.decode(eventID: event, body: [])
        XCTAssertEqual(empty.accessLevel, .staff)
        XCTAssertEqual(empty.expiresInMinutes, 60)
        XCTAssertEqual(empty.maxUses, 1)
        let full = try InviteRequest.decode(eventID: event, body: Array(#"{"access_level":"admin","expires_in_minutes":30,"max_uses":300}"#.utf8))
        XCTAssertEqual(full.accessLevel, .admin)
        XCTAssertEqual(full.expiresInMinutes, 30)
        XCTAssertEqual(full.maxUses, 300)
        for bad in [#"{"access_level":"king"}"#, #"{"max_uses":0}"#, #"{"max_uses":10001}"#, #"{"expires_in_minutes":0}"#,
                    #"{"expires_in_minutes":10081}"#, #"{"max_uses":true}"#, #"{"max_uses":1.5}"#, #"[1]"#, "nope",
                    #"{"access_level":3}"#] {
            XCTAssertThrowsError(try InviteRequest.decode(eventID: event, body: Array(bad.utf8)), bad) { e in
                XCTAssertEqual((e as? StaffcastError)?.code, .invalid, bad)
            }
        }
    }

    func testNobodyInvitesAboveTheirOwnLevel() {
        XCTAssertTrue(AccessLevel.owner.mayInvite(at: .owner))
        XCTAssertTrue(AccessLevel.owner.mayInvite(at: .staff))
        XCTAssertTrue(AccessLevel.admin.mayInvite(at: .admin))
        XCTAssertTrue(AccessLevel.admin.mayInvite(at: .staff))
        XCTAssertFalse(AccessLevel.admin.mayInvite(at: .owner))
        for level in AccessLevel.allCases { XCTAssertFalse(AccessLevel.staff.mayInvite(at: level)) }
    }

    func testGoneIs410() {
        XCTAssertEqual(ErrorCode.gone.httpStatus, 410)
        XCTAssertEqual(ErrorCode.gone.rawValue, "gone")
        XCTAssertTrue(ErrorCode.all.contains(.gone))
    }

    func testJoinURLs() throws {
        let code = "3q2-7wEXAMPLEcodeAbC_d"
        XCTAssertTrue(InviteURL.looksLikeCode(code))
        XCTAssertEqual(InviteURL.make(base: "http://10.0.0.5:8080/", code: code), "http://10.0.0.5:8080/join/\(code)")
        let parsed = try XCTUnwrap(InviteURL.parse("https://staff.example.org/join/\(code)"))
        XCTAssertEqual(parsed.base, "https://staff.example.org")
        XCTAssertEqual(parsed.code, code)
        XCTAssertEqual(InviteURL.parse("http://h:1/join/\(code)?x=1")?.code, code)
        XCTAssertNil(InviteURL.parse("http://h:1/join/short"))
        XCTAssertNil(InviteURL.parse("ftp://h/join/\(code)"))
        XCTAssertNil(InviteURL.parse(code))
        XCTAssertFalse(InviteURL.looksLikeCode("3q2-7wEXAMPLEcodeAbC/d"))
        XCTAssertFalse(InviteURL.looksLikeCode(""))
    }

    func testRedeemLimiterPerAddressRefillsAndStaysBounded() {
        var limiter = RedeemLimiter(perSecond: 0.5, burst: 3, maxAddresses: 4)
        XCTAssertEqual((0..<4).map { _ in limiter.allow("10.0.0.1", now: 100) }, [true, true, true, false])
        XCTAssertTrue(limiter.allow("10.0.0.2", now: 100), "another address has its own tries")
        XCTAssertFalse(limiter.allow("10.0.0.1", now: 101), "half a try refilled after 1 s")
        XCTAssertTrue(limiter.allow("10.0.0.1", now: 103), "one try back after 2 s")
        XCTAssertEqual(limiter.retryAfterSeconds, 2)
        for i in 3...10 { _ = limiter.allow("10.0.0.\(i)", now: 104) }
        XCTAssertLessThanOrEqual(limiter.count, 4)
        // An address forgotten because the table was full starts with a full bucket: no worse
        // than a new address, and the bound keeps the memory fixed.
        XCTAssertTrue(limiter.allow("10.0.0.1", now: 200))
    }

    func testABrowserOffersTheTokenAsASubprotocol() {
        func head(_ headers: [(String, String)], query: [String: String] = [:]) -> HTTPRequestHead {
            HTTPRequestHead(method: "GET", path: "/v1/ws", query: query, isHTTP11: true,
                            headers: headers.map { (name: $0.0, value: $0.1) })
        }
        XCTAssertEqual(head([("sec-websocket-protocol", "staffcast.v1, staffcast.bearer.sc_abc")]).bearerToken, "sc_abc")
        XCTAssertEqual(head([("authorization", "Bearer sc_hdr"), ("sec-websocket-protocol", "staffcast.bearer.sc_abc")]).bearerToken,
                       "sc_hdr", "the header wins")
        XCTAssertEqual(head([("sec-websocket-protocol", "staffcast.bearer.sc_abc")], query: ["access_token": "sc_q"]).bearerToken, "sc_q")
        XCTAssertNil(head([("sec-websocket-protocol", "staffcast.v1")]).bearerToken)
    }
}
