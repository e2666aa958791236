import Foundation
import StaffcastCore
import XCTest

final class TokenTableTests: XCTestCase {
    let now = Date(timeIntervalSince1970: 1_700_000_000)
    let alice = Identity(userID: UUID(uuidString: "00000000-0000-0000-0000-00000000000A")!, displayName: "Alice")
    let bob = Identity(userID: UUID(uuidString: "00000000-0000-0000-0000-00000000000B")!, displayName: "Bob")

    /// A digest of 32 bytes, all `fill` except the last, which is `last`.
    func digest(_ fill: UInt8, last: UInt8 = 0) -> TokenDigest {
        TokenDigest(bytes: [UInt8](repeating: fill, count: 31) + [last])!
    }

    func testEmptyTableKnowsNothing() {
        let table = TokenTable()
        XCTAssertEqual(table.count, 0)
        XCTAssertNil(table.identity(for: digest(1), now: now))
    }

    func testInsertAndLookUp() {
        var table = TokenTable()
        table.insert(digest(1), identity: alice, expiresAt: nil)
        table.insert(digest(2), identity: bob, expiresAt: now.addingTimeInterval(60))
        XCTAssertEqual(table.count, 2)
        XCTAssertEqual(table.identity(for: digest(1), now: now), alice)
        XCTAssertEqual(table.identity(for: digest(2), now: now), bob)
        XCTAssertNil(table.identity(for: digest(3), now: now))
        // A token without an expiry never expires.
        XCTAssertEqual(table.identity(for: digest(1), now: .distantFuture), alice)
    }

    func testDigestsDifferingOnlyInTheLastByteAreDifferentTokens() {
        var table = TokenTable()
        table.insert(digest(7, last: 1), identity: alice, expiresAt: nil)
        table.insert(digest(7, last: 2), identity: bob, expiresAt: nil)
        XCTAssertEqual(table.count, 2)
        XCTAssertEqual(table.identity(for: digest(7, last: 1), now: now), alice)
        XCTAssertEqual(table.identity(for: digest(7, last: 2), now: now), bob)
        XCTAssertNil(table.identity(for: digest(7, last: 3), now: now))
    }

    func testInsertReplaces() {
        var table = TokenTable()
        table.insert(digest(1), identity: alice, expiresAt: now.addingTimeInterval(-1))
        XCTAssertNil(table.identity(for: digest(1), now: now))
        table.insert(digest(1), identity: bob, expiresAt: nil)
        XCTAssertEqual(table.count, 1)
        XCTAssertEqual(table.identity(for: digest(1), now: now), bob)
    }

    func testExpiryAtTheBoundary() {
        var table = TokenTable()
        table.insert(digest(1), identity: alice, expiresAt: now)
        XCTAssertEqual(table.identity(for: digest(1), now: now.addingTimeInterval(-0.001)), alice)
        XCTAssertNil(table.identity(for: digest(1), now: now), "expiresAt == now is expired")
        XCTAssertNil(table.identity(for: digest(1), now: now.addingTimeInterval(0.001)))
        XCTAssertNil(table.identity(for: digest(1), now: now.addingTimeInterval(3_600)))
        // Looking up an expired token does not drop it.
        XCTAssertEqual(table.count, 1)
    }

    func testRemoveSaysWhetherTheTokenWasKnown() {
        var table = TokenTable()
        table.insert(digest(1), identity: alice, expiresAt: nil)
        table.insert(digest(2), identity: bob, expiresAt: nil)
        XCTAssertFalse(table.remove(digest(3)))
        XCTAssertEqual(table.count, 2)
        XCTAssertTrue(table.remove(digest(1)))
        XCTAssertEqual(table.count, 1)
        XCTAssertNil(table.identity(for: digest(1), now: now))
        XCTAssertEqual(table.identity(for: digest(2), now: now), bob)
        XCTAssertFalse(table.remove(digest(1)), "already removed")
        XCTAssertTrue(table.remove(digest(2)))
        XCTAssertEqual(table.count, 0)
    }

    func testRemoveExpiredReturnsExactlyTheExpiredOnes() {
        var table = TokenTable()
        table.insert(digest(1), identity: alice, expiresAt: now.addingTimeInterval(-3_600)) // long expired
        table.insert(digest(2), identity: alice, expiresAt: now)                          // expires right now
        table.insert(digest(3), identity: bob, expiresAt: now.addingTimeInterval(0.001))  // still valid
        table.insert(digest(4), identity: bob, expiresAt: nil)                            // never expires

        let removed = table.removeExpired(now: now)
        XCTAssertEqual(removed.count, 2)
        XCTAssertEqual(Set(removed), [digest(1), digest(2)])
        XCTAssertEqual(table.count, 2)
        XCTAssertNil(table.identity(for: digest(1), now: now.addingTimeInterval(-7_200)), "removed, not just expired")
        XCTAssertNil(table.identity(for: digest(2), now: now.addingTimeInterval(-7_200)))
        XCTAssertEqual(table.identity(for: digest(3), now: now), bob)
        XCTAssertEqual(table.identity(for: digest(4), now: now), bob)

        XCTAssertEqual(table.removeExpired(now: now), [], "nothing more has expired")
        XCTAssertEqual(table.count, 2)

        XCTAssertEqual(table.removeExpired(now: now.addingTimeInterval(0.001)), [digest(3)])
        XCTAssertEqual(table.count, 1)
        XCTAssertEqual(table.removeExpired(now: .distantFuture), [])
        XCTAssertEqual(table.identity(for: digest(4), now: .distantFuture), bob)
    }

    func testRemoveExpiredOnAnEmptyTable() {
        var table = TokenTable()
        XCTAssertEqual(table.removeExpired(now: now), [])
        XCTAssertEqual(table.count, 0)
    }
}
