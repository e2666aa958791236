import StaffcastCore
import XCTest

/// Durations as every option writes them: 30m, 2h, 3d; plain minutes only where asked.
final class DurationTextTests: XCTestCase {
    func testUnitsAndPlainMinutes() {
        XCTAssertEqual(DurationText.seconds("30m", plainMinutes: false), 1_800)
        XCTAssertEqual(DurationText.seconds("2h", plainMinutes: false), 7_200)
        XCTAssertEqual(DurationText.seconds("3d", plainMinutes: false), 259_200)
        XCTAssertNil(DurationText.seconds("30", plainMinutes: false), "no plain numbers where minutes were never the unit")
        XCTAssertEqual(DurationText.minutes("30"), 30)
        XCTAssertEqual(DurationText.minutes("2h"), 120)
        XCTAssertEqual(DurationText.minutes("1d"), 1_440)
    }

    func testWhatIsNotADuration() {
        for bad in ["", "m", "0m", "-1h", "+3d", "1.5h", "7x", " 7d", "7 d", "7D", "99999999999m", "3650d1"] {
            XCTAssertNil(DurationText.seconds(bad, plainMinutes: true), bad)
        }
        XCTAssertNil(DurationText.seconds("3651d", plainMinutes: false), "beyond the limit")
        XCTAssertEqual(DurationText.seconds("3650d", plainMinutes: false), 3_650 * 86_400)
    }
}
