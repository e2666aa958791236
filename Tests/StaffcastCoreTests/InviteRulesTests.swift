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

    func testRedeemLimiterCountsOnlyWrongCodesAndNeverRefusesALiveCode() {
        var limiter = RedeemLimiter(perSecond: 0.2, burst: 10, maxLiveCodes: 2)
        func redeem(_ code: String, at now: Double, good: Bool) -> RedeemLimiter.Admission {
            let a = limiter.admit("203.0.113.9", code: code, now: now)
            if a != .refused { limiter.settle(a, address: "203.0.113.9", code: code, good ? .redeemed : .wrongCode, now: now) }
            return a
        }
        // A crowd behind one address joins with one link: the first costs a try and gives it
        // back, the rest pass as a live code.
        XCTAssertEqual(redeem("briefing", at: 0, good: true), .counted)
        XCTAssertEqual((1...29).map { redeem("briefing", at: Double($0) / 100, good: true) }, Array(repeating: .liveCode, count: 29))
        // Wrong codes spend the address's 10 tries, then are refused without a lookup.
        let wrong = (0..<12).map { redeem("guess\($0)", at: 1, good: false) }
        XCTAssertEqual(wrong.filter { $0 == .counted }.count, 10)
        XCTAssertEqual(wrong.suffix(2), [.refused, .refused])
        XCTAssertEqual(redeem("briefing", at: 1, good: true), .liveCode, "wrong codes do not lock out a live link")
        // A link not seen yet waits for one try to refill (1 / perSecond = 5 s).
        XCTAssertEqual(limiter.admit("203.0.113.9", code: "second", now: 2), .refused)
        XCTAssertEqual(limiter.retryAfterSeconds, 5)
        XCTAssertEqual(redeem("second", at: 6, good: true), .counted)
        // …unless this server created it.
        limiter.remember(code: "third")
        XCTAssertEqual(limiter.admit("203.0.113.9", code: "third", now: 6), .liveCode)
        // A code that turns out used up is no longer live; one not judged (a bad name) gives its try back.
        XCTAssertEqual(redeem("third", at: 6, good: false), .liveCode)
        XCTAssertEqual(limiter.admit("203.0.113.9", code: "third", now: 6), .counted, "it costs a try again (the one \"second\" gave back)")
        var fresh = RedeemLimiter(perSecond: 0.2, burst: 1)
        let a = fresh.admit("10.0.0.1", code: "x", now: 0)
        fresh.settle(a, address: "10.0.0.1", code: "x", .notJudged, now: 0)
        XCTAssertEqual(fresh.admit("10.0.0.1", code: "x", now: 0), .counted, "the try came back and x is not live")
        // Bounded: at most maxLiveCodes (2) are remembered, the oldest go first.
        XCTAssertEqual(limiter.admit("203.0.113.9", code: "briefing", now: 6), .refused, "forgotten after second and third")
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
