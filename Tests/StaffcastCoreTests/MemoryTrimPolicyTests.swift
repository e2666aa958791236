import StaffcastCore
import XCTest

final class MemoryTrimPolicyTests: XCTestCase {
    func testTrimsOnceAfterAWaveOfClosesAndNotMoreOftenThanTheInterval() {
        var p = MemoryTrimPolicy(wave: 100, minimumInterval: 10)
        XCTAssertFalse(p.observe(held: 0, now: 0))
        XCTAssertFalse(p.observe(held: 500, now: 1))   // growing: nothing to give back
        XCTAssertFalse(p.observe(held: 450, now: 2))   // a few closed: not a wave
        XCTAssertTrue(p.observe(held: 300, now: 3))    // 200 fewer than the peak
        XCTAssertFalse(p.observe(held: 300, now: 4))   // the peak is now 300
        XCTAssertFalse(p.observe(held: 600, now: 5))
        XCTAssertFalse(p.observe(held: 0, now: 6))     // a wave, but within 10 s of the last trim
        XCTAssertTrue(p.observe(held: 0, now: 13))     // still owed: done once the interval passed
        XCTAssertFalse(p.observe(held: 0, now: 30))    // nothing since
    }
}
