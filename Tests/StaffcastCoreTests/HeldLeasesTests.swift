import StaffcastCore
import XCTest

/// Which outbox attempts may still start under their lease (`HeldLeases`).
final class HeldLeasesTests: XCTestCase {
    func testAnAttemptStartsOnlyWithAnAttemptsTimeLeftOnItsLease() {
        var held = HeldLeases(leaseSeconds: 60, margin: 25)
        XCTAssertEqual(held.claimed([1, 2], now: 100), [1, 2])
        XCTAssertTrue(held.mayStart(1, now: 134.9))
        XCTAssertFalse(held.mayStart(1, now: 135), "25 s left: an attempt may not finish in time")
        held.renewed([1], now: 130)
        XCTAssertTrue(held.mayStart(1, now: 160), "renewed")
        XCTAssertFalse(held.mayStart(2, now: 160), "not renewed (the database found its lease run out)")
        XCTAssertFalse(held.mayStart(3, now: 100), "never held")
        XCTAssertFalse(held.start(2, now: 160), "too late: let go")
        XCTAssertEqual(held.count, 1)
        XCTAssertTrue(held.start(1, now: 160))
    }

    func testARowClaimedAgainWhileHeldIsNotQueuedTwice() {
        var held = HeldLeases(leaseSeconds: 60, margin: 25)
        _ = held.claimed([1], now: 0)
        XCTAssertEqual(held.claimed([1, 2], now: 70), [2], "1 still waits in the queue")
        XCTAssertTrue(held.mayStart(1, now: 90), "under the new claim's lease")
        held.released(1)
        XCTAssertFalse(held.mayStart(1, now: 90))
        XCTAssertEqual(held.count, 1)
        held.renewed([1], now: 95)
        XCTAssertEqual(held.count, 1, "a renewal does not hold what was released")
    }
}
