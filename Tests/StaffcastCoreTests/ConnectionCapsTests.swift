import Foundation
import StaffcastCore
import XCTest

final class ConnectionCapsTests: XCTestCase {
    let alice = UUID(uuidString: "00000000-0000-0000-0000-00000000000A")!
    let bob = UUID(uuidString: "00000000-0000-0000-0000-00000000000B")!
    let carol = UUID(uuidString: "00000000-0000-0000-0000-00000000000C")!

    /// The slots held in all, and by each user named.
    func assertHeld(_ caps: ConnectionCaps, total: Int, _ perUser: [UUID: Int], file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(caps.total, total, "total", file: file, line: line)
        for (user, count) in perUser { XCTAssertEqual(caps.count(of: user), count, "\(user)", file: file, line: line) }
    }

    func testFreshCapsAreEmpty() {
        let caps = ConnectionCaps(maxConnections: 5, maxPerUser: 2)
        XCTAssertEqual(caps.maxConnections, 5)
        XCTAssertEqual(caps.maxPerUser, 2)
        XCTAssertEqual(caps.total, 0)
        XCTAssertEqual(caps.count(of: alice), 0)
    }

    func testPerUserCap() {
        var caps = ConnectionCaps(maxConnections: 10, maxPerUser: 2)
        XCTAssertNil(caps.take(for: alice))
        XCTAssertNil(caps.take(for: alice))
        XCTAssertEqual(caps.take(for: alice), .userFull(limit: 2))
        XCTAssertEqual(caps.take(for: alice), .userFull(limit: 2))
        XCTAssertEqual(caps.count(of: alice), 2, "a refused take holds no slot")
        XCTAssertEqual(caps.total, 2)

        // Another user is not affected by Alice's cap.
        XCTAssertNil(caps.take(for: bob))
        XCTAssertEqual(caps.count(of: bob), 1)
        XCTAssertEqual(caps.total, 3)
    }

    func testTotalCapIsCheckedBeforeThePerUserCap() {
        var caps = ConnectionCaps(maxConnections: 3, maxPerUser: 2)
        XCTAssertNil(caps.take(for: alice))
        XCTAssertNil(caps.take(for: alice))
        XCTAssertNil(caps.take(for: bob))
        XCTAssertEqual(caps.total, 3)

        // Bob is under his own cap, but the server is full.
        XCTAssertEqual(caps.take(for: bob), .serverFull(limit: 3))
        // A new user too.
        XCTAssertEqual(caps.take(for: carol), .serverFull(limit: 3))
        // Alice is at both caps: the server-wide one is reported.
        XCTAssertEqual(caps.take(for: alice), .serverFull(limit: 3))

        assertHeld(caps, total: 3, [alice: 2, bob: 1, carol: 0])
    }

    func testReleaseFreesASlot() {
        var caps = ConnectionCaps(maxConnections: 2, maxPerUser: 2)
        XCTAssertNil(caps.take(for: alice))
        XCTAssertNil(caps.take(for: alice))
        XCTAssertEqual(caps.take(for: bob), .serverFull(limit: 2))

        caps.release(for: alice)
        assertHeld(caps, total: 1, [alice: 1])
        XCTAssertNil(caps.take(for: bob), "the freed slot is Bob's to take")
        assertHeld(caps, total: 2, [bob: 1])

        caps.release(for: alice)
        caps.release(for: bob)
        assertHeld(caps, total: 0, [alice: 0, bob: 0])
        // Fully released caps are the same as fresh ones (no zero entries are kept).
        XCTAssertEqual(caps, ConnectionCaps(maxConnections: 2, maxPerUser: 2))
    }

    func testReleaseFreesAPerUserSlot() {
        var caps = ConnectionCaps(maxConnections: 10, maxPerUser: 1)
        XCTAssertNil(caps.take(for: alice))
        XCTAssertEqual(caps.take(for: alice), .userFull(limit: 1))
        caps.release(for: alice)
        XCTAssertNil(caps.take(for: alice))
        XCTAssertEqual(caps.count(of: alice), 1)
        XCTAssertEqual(caps.total, 1)
    }

    func testReleaseOfAnUnknownUserIsHarmless() {
        var caps = ConnectionCaps(maxConnections: 3, maxPerUser: 2)
        caps.release(for: carol)
        assertHeld(caps, total: 0, [carol: 0])
        XCTAssertEqual(caps, ConnectionCaps(maxConnections: 3, maxPerUser: 2))

        XCTAssertNil(caps.take(for: alice))
        XCTAssertNil(caps.take(for: bob))
        caps.release(for: carol) // must not take Alice's or Bob's slot away
        assertHeld(caps, total: 2, [alice: 1, bob: 1, carol: 0])
    }

    func testExtraReleasesNeverGoNegative() {
        var caps = ConnectionCaps(maxConnections: 2, maxPerUser: 2)
        XCTAssertNil(caps.take(for: alice))
        XCTAssertNil(caps.take(for: bob))
        caps.release(for: alice)
        caps.release(for: alice)
        caps.release(for: alice)
        assertHeld(caps, total: 1, [alice: 0, bob: 1]) // Bob's slot is still held

        // The caps are still exact: exactly one more slot fits.
        XCTAssertNil(caps.take(for: alice))
        XCTAssertEqual(caps.take(for: carol), .serverFull(limit: 2))
        XCTAssertEqual(caps.total, 2)
    }

    func testCountsFollowManyUsers() {
        var caps = ConnectionCaps(maxConnections: 100, maxPerUser: 3)
        let users = (0..<10).map { _ in UUID() }
        for (i, user) in users.enumerated() {
            for _ in 0..<(i % 3 + 1) { XCTAssertNil(caps.take(for: user)) }
        }
        for (i, user) in users.enumerated() { XCTAssertEqual(caps.count(of: user), i % 3 + 1) }
        XCTAssertEqual(caps.total, users.indices.reduce(0) { $0 + $1 % 3 + 1 }) // 1+2+3+1+2+3+1+2+3+1 = 19
        XCTAssertEqual(caps.total, 19)
    }
}
