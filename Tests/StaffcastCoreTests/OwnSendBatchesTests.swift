import StaffcastCore
import XCTest

final class OwnSendBatchesTests: XCTestCase {
    func testABatchHandedOnNeedsNoReadAndOneStillDecidingIsWaitedFor() {
        var own = OwnSendBatches()
        let a = own.begin(), b = own.begin()
        XCTAssertNotEqual(a, b)
        XCTAssertEqual(own.verdict([a]), .wait, "its NOTIFY can beat its hand-on")
        own.decide(a, handedOn: true)
        XCTAssertEqual(own.verdict([a]), .skip)
        XCTAssertEqual(own.verdict([a, b]), .wait)
        own.decide(b, handedOn: true)
        XCTAssertEqual(own.verdict([a, b]), .skip)
        XCTAssertEqual(own.deciding, 0)
    }

    func testABatchLeftToTheFeedIsRead() {
        var own = OwnSendBatches()
        let a = own.begin(), b = own.begin()
        own.decide(a, handedOn: true)
        own.decide(b, handedOn: false) // to teams, gate behind, or its commit failed
        XCTAssertEqual(own.verdict([a, b]), .read)
        XCTAssertEqual(own.verdict([b]), .read)
    }

    func testAReadWinsOverAWait() {
        var own = OwnSendBatches()
        let a = own.begin(), b = own.begin()
        own.decide(a, handedOn: false)
        XCTAssertEqual(own.verdict([b, a]), .read, "no need to wait for b: the read happens anyway")
    }

    func testAnUnknownOrForgottenBatchIsRead() {
        var own = OwnSendBatches()
        XCTAssertEqual(own.verdict([42]), .read, "never begun here (another run of this server?)")
        let first = own.begin()
        own.decide(first, handedOn: true)
        var recent: [UInt64] = []
        for _ in 0..<OwnSendBatches.capacity {
            let n = own.begin()
            own.decide(n, handedOn: true)
            recent.append(n)
        }
        XCTAssertEqual(own.verdict([first]), .read, "forgotten past the capacity: read, which is always safe")
        // Forgotten a quarter at a time: the last three quarters of the capacity are still known.
        XCTAssertEqual(own.verdict(Array(recent.suffix(OwnSendBatches.capacity * 3 / 4))), .skip)
    }

    func testADecisionIsTakenOnce() {
        var own = OwnSendBatches()
        let a = own.begin()
        own.decide(a, handedOn: false)
        own.decide(a, handedOn: true) // a late second word changes nothing
        XCTAssertEqual(own.verdict([a]), .read)
    }
}
