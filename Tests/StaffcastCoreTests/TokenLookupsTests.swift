import StaffcastCore
import XCTest

final class TokenLookupsTests: XCTestCase {
    func digest(_ n: UInt8) -> TokenDigest { TokenDigest(bytes: [UInt8](repeating: n, count: 32))! }

    func id(_ start: TokenLookups<String>.Start, file: StaticString = #filePath, line: UInt = #line) -> Int? {
        if case .lookUp(let id) = start { return id }
        XCTFail("expected a lookup, got \(start)", file: file, line: line)
        return nil
    }

    func refusal(_ start: TokenLookups<String>.Start) -> TokenLookups<String>.Refusal? {
        if case .refused(let r) = start { return r }
        return nil
    }

    func testOneLookupPerDigestAndEveryWaiterIsTold() throws {
        var l = TokenLookups<String>()
        let first = try XCTUnwrap(id(l.begin(digest(1), address: "a", now: 0, waiter: "w1")))
        guard case .joined = l.begin(digest(1), address: "b", now: 0.1, waiter: "w2") else { return XCTFail("not joined") }
        XCTAssertEqual(l.inFlight, 1)
        XCTAssertEqual(l.finish(digest(1), id: first, valid: true, now: 0.2), ["w1", "w2"])
        XCTAssertEqual(l.inFlight, 0)
        XCTAssertEqual(l.pendingCount, 0)
        // Valid tokens are remembered by the table, not here: a later unknown use looks up again.
        XCTAssertNotNil(id(l.begin(digest(1), address: "a", now: 0.3, waiter: "w3")))
    }

    func testANotValidDigestIsAnsweredFromMemoryForAWhile() throws {
        var l = TokenLookups<String>()
        let first = try XCTUnwrap(id(l.begin(digest(2), address: "a", now: 0, waiter: "w")))
        XCTAssertEqual(l.finish(digest(2), id: first, valid: false, now: 1), ["w"])
        XCTAssertEqual(refusal(l.begin(digest(2), address: "a", now: 1 + l.limits.negativeTTL - 0.1, waiter: "x")), .notValid)
        XCTAssertNotNil(id(l.begin(digest(2), address: "a", now: 1 + l.limits.negativeTTL, waiter: "y")), "forgotten after its TTL")
    }

    func testAFailedLookupIsNotRemembered() throws {
        var l = TokenLookups<String>()
        let first = try XCTUnwrap(id(l.begin(digest(3), address: "a", now: 0, waiter: "w")))
        XCTAssertEqual(l.finish(digest(3), id: first, valid: nil, now: 1), ["w"])
        XCTAssertNotNil(id(l.begin(digest(3), address: "a", now: 1, waiter: "again")))
    }

    func testGuessingIsRateLimitedPerAddress() {
        var limits = TokenLookups<String>.Limits()
        limits.burst = 5
        limits.perSecond = 1
        limits.maxInFlight = 1_000
        var l = TokenLookups<String>(limits: limits)
        var started = 0
        for n in 0..<20 {
            let start = l.begin(digest(UInt8(n)), address: "guesser", now: 0, waiter: "w")
            if case .lookUp = start { started += 1 } else { XCTAssertEqual(refusal(start), .rateLimited) }
        }
        XCTAssertEqual(started, 5, "the burst, then refused")
        XCTAssertNotNil(id(l.begin(digest(100), address: "someone-else", now: 0, waiter: "w")), "other addresses are not held up")
        XCTAssertNotNil(id(l.begin(digest(101), address: "guesser", now: 1.01, waiter: "w")), "refilled")
        // Joining a lookup under way and answers from memory take nothing from the bucket.
        guard case .joined = l.begin(digest(0), address: "guesser", now: 1.02, waiter: "w") else { return XCTFail("not joined") }
    }

    func testInFlightAndWaitersAreBounded() throws {
        var limits = TokenLookups<String>.Limits()
        limits.maxInFlight = 2
        limits.maxWaiters = 2
        var l = TokenLookups<String>(limits: limits)
        let a = try XCTUnwrap(id(l.begin(digest(1), address: "a", now: 0, waiter: "1")))
        _ = try XCTUnwrap(id(l.begin(digest(2), address: "b", now: 0, waiter: "2")))
        XCTAssertEqual(refusal(l.begin(digest(3), address: "c", now: 0, waiter: "3")), .busy)
        guard case .joined = l.begin(digest(1), address: "d", now: 0, waiter: "1b") else { return XCTFail("not joined") }
        XCTAssertEqual(refusal(l.begin(digest(1), address: "e", now: 0, waiter: "1c")), .busy, "at most maxWaiters per digest")
        // Past its deadline the waiters are handed back, but the job still counts until it returns.
        XCTAssertEqual(l.expire(digest(1), id: a), ["1", "1b"])
        XCTAssertEqual(l.expire(digest(1), id: a), [], "once")
        XCTAssertEqual(refusal(l.begin(digest(3), address: "c", now: 0, waiter: "3")), .busy)
        XCTAssertEqual(l.finish(digest(1), id: a, valid: true, now: 1), [], "its waiters were told at the deadline")
        XCTAssertNotNil(id(l.begin(digest(3), address: "c", now: 1, waiter: "3")))
    }

    func testAnExpiredLookupDoesNotAnswerTheNextOne() throws {
        var l = TokenLookups<String>()
        let old = try XCTUnwrap(id(l.begin(digest(1), address: "a", now: 0, waiter: "old")))
        XCTAssertEqual(l.expire(digest(1), id: old), ["old"])
        let new = try XCTUnwrap(id(l.begin(digest(1), address: "a", now: 4, waiter: "new")))
        XCTAssertEqual(l.finish(digest(1), id: old, valid: true, now: 4.1), [], "the old job's return is not the new lookup's answer")
        XCTAssertEqual(l.expire(digest(1), id: old), [])
        XCTAssertEqual(l.finish(digest(1), id: new, valid: true, now: 4.2), ["new"])
        XCTAssertEqual(l.inFlight, 0)
    }

    func testAbandonedLookupHandsBackItsWaiters() throws {
        var l = TokenLookups<String>()
        let a = try XCTUnwrap(id(l.begin(digest(1), address: "a", now: 0, waiter: "w")))
        XCTAssertEqual(l.abandon(digest(1), id: a), ["w"])
        XCTAssertEqual(l.inFlight, 0)
        XCTAssertEqual(l.pendingCount, 0)
    }

    func testRememberedDigestsAreBounded() throws {
        var limits = TokenLookups<String>.Limits()
        limits.maxRemembered = 10
        limits.maxInFlight = 1_000
        limits.burst = 1_000
        var l = TokenLookups<String>(limits: limits)
        for n in 0..<50 {
            let i = try XCTUnwrap(id(l.begin(digest(UInt8(n)), address: "a", now: 0, waiter: "w")))
            _ = l.finish(digest(UInt8(n)), id: i, valid: false, now: 0)
            XCTAssertLessThanOrEqual(l.rememberedCount, 10)
        }
    }
}
