import Foundation
import StaffcastCore
import XCTest

final class JSONBytesTests: XCTestCase {
    func testTimestampsAreTheSameTextAsRFC3339Format() {
        var dates = [Date(timeIntervalSince1970: 0), Date(timeIntervalSince1970: 951_782_400.999), // 2000-02-29
                     Date(timeIntervalSince1970: 1_795_300_000.1205), Date(timeIntervalSince1970: 4_102_444_799.5)]
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<2_000 { dates.append(Date(timeIntervalSince1970: Double.random(in: 0...4_000_000_000, using: &rng))) }
        for date in dates {
            var out: [UInt8] = []
            JSONBytes.appendRFC3339(date, to: &out)
            XCTAssertEqual(String(decoding: out, as: UTF8.self), "\"\(RFC3339.format(date))\"", "\(date.timeIntervalSince1970)")
        }
    }

    func testStringsAndIdsAreValidJSON() throws {
        let id = UUID()
        let text = "Gate \"3\"\\ \n\t\u{01} Çağrı 🚨"
        var out: [UInt8] = Array("[".utf8)
        JSONBytes.appendString(text, to: &out)
        out.append(UInt8(ascii: ","))
        JSONBytes.appendUUID(id, to: &out)
        out.append(UInt8(ascii: "]"))
        let parsed = try JSONSerialization.jsonObject(with: Data(out)) as? [String]
        XCTAssertEqual(parsed, [text, id.uuidString.lowercased()])
    }
}
