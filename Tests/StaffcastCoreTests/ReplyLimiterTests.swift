import Foundation
import StaffcastCore
import XCTest

/// The per-user reply and poll-answer rate limit (`ReplyLimiter`).
final class ReplyLimiterTests: XCTestCase {
    func testABurstThenTheRatePerMinute() {
        var limiter = ReplyLimiter(burst: 5, perMinute: 6)
        let user = UUID()
        for i in 0..<5 { XCTAssertNil(limiter.refusal(for: user, now: 100), "reply \(i) of the burst") }
        let refusal = limiter.refusal(for: user, now: 100)
        XCTAssertEqual(refusal?.code, .rateLimited)
        XCTAssertEqual(refusal?.message.contains("a burst of 5 replies and poll answers, then 6 a minute"), true, refusal?.message ?? "")
        XCTAssertEqual(refusal?.message.contains("reply_burst and reply_rate_per_minute"), true)
        // 6 a minute: one more after 10 s, not before.
        XCTAssertNotNil(limiter.refusal(for: user, now: 109))
        XCTAssertNil(limiter.refusal(for: user, now: 110.1))
        XCTAssertNotNil(limiter.refusal(for: user, now: 110.2))
        XCTAssertEqual(limiter.retryAfterSeconds, 10)
    }

    /// A reply or answer that stored nothing (the database was down) is given back: the attack
    /// round found "I need help" refused for the limit right after an outage that had refused it.
    func testWhatStoredNothingIsGivenBack() {
        var limiter = ReplyLimiter(burst: 2, perMinute: 1)
        let user = UUID()
        for _ in 0..<5 {
            XCTAssertNil(limiter.refusal(for: user, now: 0))
            limiter.giveBack(for: user, now: 0)
        }
        XCTAssertNil(limiter.refusal(for: user, now: 0))
        XCTAssertNil(limiter.refusal(for: user, now: 0))
        XCTAssertNotNil(limiter.refusal(for: user, now: 0), "what was stored still counts")
        limiter.giveBack(for: UUID(), now: 0) // nobody it knows: nothing to give back
        XCTAssertEqual(limiter.count, 1)
    }

    func testEachUserHasABucketOfTheirOwn() {
        var limiter = ReplyLimiter(burst: 1, perMinute: 1)
        let (a, b) = (UUID(), UUID())
        XCTAssertNil(limiter.refusal(for: a, now: 0))
        XCTAssertNotNil(limiter.refusal(for: a, now: 0))
        XCTAssertNil(limiter.refusal(for: b, now: 0))
    }

    func testBoundedForgettingOnlyUsersWhoseBucketIsFullAgain() {
        var limiter = ReplyLimiter(burst: 1, perMinute: 60, maxUsers: 2) // full again 1 s after a reply
        let (old, busy, new) = (UUID(), UUID(), UUID())
        XCTAssertNil(limiter.refusal(for: old, now: 0))
        XCTAssertNil(limiter.refusal(for: busy, now: 5))
        XCTAssertNil(limiter.refusal(for: new, now: 5.5))
        XCTAssertEqual(limiter.count, 2, "the old user, whose bucket was full again, was forgotten")
        XCTAssertNotNil(limiter.refusal(for: busy, now: 5.6), "the busy one is still limited")
    }
}
