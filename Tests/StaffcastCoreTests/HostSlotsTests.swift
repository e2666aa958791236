import StaffcastCore
import XCTest

/// The per-host bound on concurrent deliveries and the bounded wait in front of it.
final class HostSlotsTests: XCTestCase {
    func testAtMostPerHostRunAtOnceAndOtherHostsAreNotStarved() {
        var slots = HostSlots<Int>(perHost: 2, maxWaiting: 10)
        for i in 0..<5 { XCTAssertTrue(slots.enqueue(i, host: "push.example")) }
        XCTAssertTrue(slots.enqueue(100, host: "hooks.example"))
        var started: [(Int, String)] = []
        while let next = slots.next() { started.append((next.item, next.host)) }
        XCTAssertEqual(started.map(\.0).sorted(), [0, 1, 100])
        XCTAssertEqual(slots.inFlight(host: "push.example"), 2)
        XCTAssertNil(slots.next(), "the busy host waits for a slot")
        slots.finished(host: "push.example")
        XCTAssertEqual(slots.next()?.item, 2, "in order within a host")
        XCTAssertEqual(slots.waitingCount, 2)
    }

    func testOneOwnerHoldsAtMostPerOwnerSlotsWhateverHostsTheyName() {
        var slots = HostSlots<Int>(perHost: 16, maxWaiting: 100, perOwner: 2)
        // One person's endpoints on ten hosts that never answer, then someone else's push.
        for i in 0..<10 { XCTAssertTrue(slots.enqueue(i, host: "tarpit\(i).example", owner: "mallory")) }
        XCTAssertTrue(slots.enqueue(100, host: "tarpit0.example", owner: "sam"))
        XCTAssertTrue(slots.enqueue(200, host: "smtp"))
        var started: [Int] = []
        while let next = slots.next() { started.append(next.item) }
        XCTAssertEqual(started.sorted(), [0, 1, 100, 200], "mallory gets two slots; sam and the email go at once")
        XCTAssertEqual(slots.waitingCount, 8)
        slots.finished(host: "tarpit0.example", owner: "mallory")
        XCTAssertEqual(slots.next()?.item, 2, "a freed slot of mallory's takes mallory's next")
        XCTAssertNil(slots.next())
    }

    func testTheWaitIsBounded() {
        var slots = HostSlots<Int>(perHost: 1, maxWaiting: 3)
        XCTAssertEqual(slots.room, 3)
        for i in 0..<3 { XCTAssertTrue(slots.enqueue(i, host: "h")) }
        XCTAssertFalse(slots.enqueue(3, host: "h"), "full: the item stays in the outbox")
        XCTAssertEqual(slots.room, 0)
        _ = slots.next()
        XCTAssertEqual(slots.room, 1)
    }
}
