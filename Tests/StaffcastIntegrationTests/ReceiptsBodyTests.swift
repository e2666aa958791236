import Foundation
import StaffcastCore
@testable import StaffcastPostgres
@testable import StaffcastServer
import XCTest

/// The receipts body is written by hand for speed; it must say exactly what its Codable
/// reference says (a field added to one and not the other fails here).
final class ReceiptsBodyTests: XCTestCase {
    func testHandWrittenReceiptsAreTheSameJSONAsTheEncoder() throws {
        var people: [Receipts.Person] = []
        for i in 0..<50 {
            let name = i == 3 ? "Şule \"gate 3\"\n" : "Staff \(i)"
            let readAt: Date? = i % 2 == 0 ? Date(timeIntervalSince1970: 1_795_300_000 + Double(i) * 0.37) : nil
            var person = Receipts.Person(userID: UUID(), displayName: name, readAt: readAt)
            if i % 3 == 0 { person.reached.append(Reached(via: "live", at: Date(timeIntervalSince1970: 1_795_300_000))) }
            if i % 5 == 0 { person.reached.append(Reached(via: "push", at: Date(timeIntervalSince1970: 1_795_300_001.25))) }
            if i == 7 { person.reached.append(Reached(via: "email", at: Date(timeIntervalSince1970: 1_795_300_060))) }
            people.append(person)
        }
        let receipts = Receipts(messageID: UUID(), eventID: UUID(), readBy: people.filter { $0.readAt != nil },
                                unreadBy: people.filter { $0.readAt == nil })
        XCTAssertEqual(receipts.totals, FunnelTotals(live: 17, push: 10, email: 1, read: 25))
        // The whole lists, and a page of them (?limit=, with its counts of everyone).
        for body in [ReceiptsBody(receipts), ReceiptsBody(ReceiptsPage(receipts, limit: 4))] {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            let reference = try JSONSerialization.jsonObject(with: encoder.encode(body)) as? NSDictionary
            let fast = try JSONSerialization.jsonObject(with: Data(body.jsonBytes)) as? NSDictionary
            XCTAssertNotNil(reference)
            XCTAssertEqual(fast, reference)
            XCTAssertEqual(String(decoding: body.jsonBytes, as: UTF8.self),
                           String(decoding: try encoder.encode(body), as: UTF8.self).replacingOccurrences(of: "\\/", with: "/") + "\n")
        }
        let page = try JSONSerialization.jsonObject(with: Data(ReceiptsBody(ReceiptsPage(receipts, limit: 4)).jsonBytes)) as? [String: Any]
        XCTAssertEqual(page?["read_count"] as? Int, 25)
        XCTAssertEqual(page?["unread_count"] as? Int, 25)
        XCTAssertEqual(page?["read_by_left_out"] as? Int, 21)
        XCTAssertEqual((page?["unread_by"] as? [Any])?.count, 4)
        XCTAssertEqual((page?["totals"] as? [String: Int])?["live"], 17)
    }
}
