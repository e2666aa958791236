import Foundation
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
            people.append(Receipts.Person(userID: UUID(), displayName: name, readAt: readAt))
        }
        let receipts = Receipts(messageID: UUID(), eventID: UUID(), readBy: people.filter { $0.readAt != nil },
                                unreadBy: people.filter { $0.readAt == nil })
        let body = ReceiptsBody(receipts)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let reference = try JSONSerialization.jsonObject(with: encoder.encode(body)) as? NSDictionary
        let fast = try JSONSerialization.jsonObject(with: Data(body.jsonBytes)) as? NSDictionary
        XCTAssertNotNil(reference)
        XCTAssertEqual(fast, reference)
        XCTAssertEqual(String(decoding: body.jsonBytes, as: UTF8.self),
                       String(decoding: try encoder.encode(body), as: UTF8.self).replacingOccurrences(of: "\\/", with: "/") + "\n")
    }
}
