import Foundation
import StaffcastCore
import XCTest

/// `GET /v1/messages/{id}/receipts?limit=N`: the parameter, and a page's exact counts and totals.
final class ReceiptsPageTests: XCTestCase {
    func testNoLimitIsTheWholeLists() throws {
        XCTAssertNil(try ReceiptsPage.limit(query: [:], csv: false))
        XCTAssertNil(try ReceiptsPage.limit(query: ["format": "csv"], csv: true))
        XCTAssertEqual(try ReceiptsPage.limit(query: ["limit": "8", "access_token": "x"], csv: false), 8)
    }

    func testBadLimitsAndUnknownParametersAreRefused() {
        for bad in [["limit": "0"], ["limit": "many"], ["limit": "10001"], ["limti": "3"]] {
            XCTAssertThrowsError(try ReceiptsPage.limit(query: bad, csv: false), "\(bad)") { error in
                XCTAssertEqual((error as? StaffcastError)?.code, .invalid)
            }
        }
    }

    func testTheCSVIsNeverLimited() {
        XCTAssertThrowsError(try ReceiptsPage.limit(query: ["limit": "5", "format": "csv"], csv: true)) { error in
            XCTAssertTrue((error as? StaffcastError)?.message.contains("always lists everyone") ?? false)
        }
    }

    func testAPageKeepsTheCountsAndTotalsOfEveryone() {
        func people(_ n: Int, read: Bool) -> [Receipts.Person] {
            (0..<n).map { i in
                var p = Receipts.Person(userID: UUID(), displayName: "P\(i)", readAt: read ? Date(timeIntervalSince1970: 1_800_000_000) : nil)
                if i % 2 == 0 { p.reached = [Reached(via: "live", at: Date(timeIntervalSince1970: 1_800_000_000))] }
                return p
            }
        }
        let all = Receipts(messageID: UUID(), eventID: UUID(), readBy: people(7, read: true), unreadBy: people(3, read: false))
        let page = ReceiptsPage(all, limit: 5)
        XCTAssertEqual(page.shown.readBy, Array(all.readBy.prefix(5)))
        XCTAssertEqual(page.shown.unreadBy, all.unreadBy)
        XCTAssertEqual(page.readCount, 7)
        XCTAssertEqual(page.unreadCount, 3)
        XCTAssertEqual(page.readLeftOut, 2)
        XCTAssertEqual(page.unreadLeftOut, 0)
        XCTAssertEqual(page.totals, all.totals)
        XCTAssertEqual(page.totals, FunnelTotals(live: 6, push: 0, email: 0, read: 7))
        XCTAssertEqual(page.shown.messageID, all.messageID)
    }
}
