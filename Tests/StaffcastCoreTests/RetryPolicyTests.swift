import StaffcastCore
import XCTest

/// The outbox's one retry policy: backoff, jitter, per-kind classification and time limits.
final class RetryPolicyTests: XCTestCase {
    let policy = RetryPolicy()

    func testBackoffDoublesUpToTheCapAndJitterStaysWithinHalfToWhole() {
        XCTAssertEqual(policy.delay(kind: .webhook, attempt: 1, jitter: 1), 1)
        XCTAssertEqual(policy.delay(kind: .webhook, attempt: 2, jitter: 1), 2)
        XCTAssertEqual(policy.delay(kind: .webhook, attempt: 5, jitter: 1), 16)
        XCTAssertEqual(policy.delay(kind: .webhook, attempt: 5, jitter: 0), 8)
        XCTAssertEqual(policy.delay(kind: .webhook, attempt: 40, jitter: 1), 1_800)
        XCTAssertEqual(policy.delay(kind: .push, attempt: 40, jitter: 1), 300)
        for j in stride(from: 0.0, through: 1.0, by: 0.1) {
            let d = policy.delay(kind: .push, attempt: 3, jitter: j)
            XCTAssertGreaterThanOrEqual(d, 2)
            XCTAssertLessThanOrEqual(d, 4)
        }
        // Out-of-range inputs are clamped, not trusted.
        XCTAssertEqual(policy.delay(kind: .push, attempt: -3, jitter: 7), 1)
    }

    func testPushStatusesFollowRFC8030() {
        let now = 1_000.0, later = 100_000.0
        func decide(_ code: Int, retryAfter: Double? = nil) -> DeliveryOutcome {
            policy.decide(kind: .push, result: .status(code, retryAfterSeconds: retryAfter), attempts: 1, now: now,
                          giveUpAt: later, jitter: 1)
        }
        XCTAssertEqual(decide(201), .delivered)
        XCTAssertEqual(decide(404), .gone)
        XCTAssertEqual(decide(410), .gone)
        XCTAssertEqual(decide(503), .retry(at: now + 1))
        XCTAssertEqual(decide(429, retryAfter: 30), .retry(at: now + 30))
        XCTAssertEqual(decide(429, retryAfter: 99_999), .retry(at: now + 300), "Retry-After is capped")
        guard case .failed = decide(400) else { return XCTFail("a 400 would fail again") }
        guard case .failed = decide(413) else { return XCTFail("a 413 would fail again") }
    }

    func testWebhooksRetryAnythingButSuccessAndRedirectsAndEmailRetriesOnly4xx() {
        for code in [400, 404, 410, 500] {
            guard case .retry = policy.decide(kind: .webhook, result: .status(code), attempts: 1, now: 0, giveUpAt: 86_400,
                                              jitter: 0.5) else { return XCTFail("webhook \(code) must be retried") }
        }
        // A redirect is not followed: final at once, saying where it pointed.
        XCTAssertEqual(policy.decide(kind: .webhook, result: .status(302, reply: "Location: https://x.example/h"), attempts: 1,
                                     now: 0, giveUpAt: 86_400, jitter: 0.5),
                       .failed(reason: "refused with 302: Location: https://x.example/h"))
        guard case .retry = policy.decide(kind: .email, result: .status(451), attempts: 1, now: 0, giveUpAt: 100, jitter: 0)
        else { return XCTFail("a 4xx SMTP reply is temporary") }
        guard case .failed = policy.decide(kind: .email, result: .status(550), attempts: 1, now: 0, giveUpAt: 100, jitter: 0)
        else { return XCTFail("a 5xx SMTP reply is permanent") }
        XCTAssertEqual(policy.decide(kind: .email, result: .status(250), attempts: 3, now: 0, giveUpAt: 100, jitter: 0), .delivered)
    }

    func testNothingIsRetriedPastItsTimeLimit() {
        let outcome = policy.decide(kind: .webhook, result: .transportFailure("timed out"), attempts: 12, now: 86_000,
                                    giveUpAt: 86_400, jitter: 1)
        guard case .failed(let reason) = outcome else { return XCTFail("\(outcome)") }
        XCTAssertTrue(reason.contains("timed out"), reason)
        XCTAssertEqual(policy.decide(kind: .webhook, result: .transportFailure("refused"), attempts: 1, now: 0, giveUpAt: 10,
                                     jitter: 1), .retry(at: 1))
        XCTAssertEqual(RetryPolicy.lifetime[.webhook], 86_400)
    }
}
