import Foundation
import StaffcastCore
import XCTest

/// The hand-written UUID text (`UUID.wireText`, `UUID(wireText:)`) against Foundation's.
final class UUIDWireTextTests: XCTestCase {
    func testWritingIsFoundationsInLowerCase() {
        for _ in 0..<10_000 {
            let id = UUID()
            XCTAssertEqual(id.wireText, id.uuidString.lowercased())
        }
        XCTAssertEqual(UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)).wireText, "00000000-0000-0000-0000-000000000000")
        XCTAssertEqual(UUID(uuid: (255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255)).wireText,
                       "ffffffff-ffff-ffff-ffff-ffffffffffff")
    }

    func testReadingTakesWhatFoundationTakesInEitherCase() {
        for _ in 0..<10_000 {
            let id = UUID()
            XCTAssertEqual(UUID(wireText: id.uuidString), id)
            XCTAssertEqual(UUID(wireText: id.uuidString.lowercased()), id)
        }
        let mixed = "0437ACEF-4adc-4730-A09F-4e4566530476"
        XCTAssertEqual(UUID(wireText: mixed), UUID(uuidString: mixed))
    }

    func testReadingRefusesAnythingButThe36CharacterForm() {
        let id = UUID().uuidString
        var bad = ["", "hall-b", String(id.dropLast()), id + "0", "{" + id + "}", id.replacingOccurrences(of: "-", with: ""),
                   id.replacingOccurrences(of: "-", with: "_"), String(id.dropLast()) + "g",
                   "0437acef-4adc-4730-a09f4-e4566530476", "0437acef4-adc-4730-a09f-4e4566530476", "éééééééé-4adc-4730-a09f-4e45665304"]
        bad.append(String(repeating: "-", count: 36))
        for text in bad {
            XCTAssertNil(UUID(wireText: text), text)
            XCTAssertNil(UUID(uuidString: text), "Foundation refuses it too: \(text)")
        }
        // Stricter than Foundation on Linux, whose sscanf takes a space for a digit.
        let spaced = " " + String(id.dropFirst())
        XCTAssertNil(UUID(wireText: spaced))
    }
}
