import StaffcastCore
import XCTest

/// Timestamps people type (`send_at`, `send --at`, `--starts-at`): a day or time that does not
/// exist is refused, never rolled over into another (found by an attack from outside: 31
/// November became 1 December, 25:00 the next day's 01:00, answered 202).
final class RFC3339Tests: XCTestCase {
    func testDaysAndTimesThatDoNotExistAreRefused() {
        for text in ["2026-11-31T10:00:00Z", "2026-12-01T25:00:00Z", "2026-12-01T10:61:00Z", "2026-12-01T10:00:99Z",
                     "2027-02-29T10:00:00Z", "2027-02-30T10:00:00Z", "2026-13-01T10:00:00Z", "2026-00-10T10:00:00Z",
                     "2026-12-00T10:00:00Z", "2026-04-31T10:00:00.000Z", "2026-12-01T24:00:00+01:00"] {
            XCTAssertNil(RFC3339.parse(text), text)
        }
    }

    func testRealDaysAndTimesAreRead() throws {
        XCTAssertEqual(RFC3339.parse("2028-02-29T23:59:59Z").map(RFC3339.format), "2028-02-29T23:59:59.000Z")
        XCTAssertEqual(RFC3339.parse("2026-12-31T00:00:00.120Z").map(RFC3339.format), "2026-12-31T00:00:00.120Z")
        XCTAssertEqual(RFC3339.parse("2026-06-30T12:30:00+02:00").map(RFC3339.format), "2026-06-30T10:30:00.000Z")
        XCTAssertNotNil(RFC3339.parse("2000-02-29T10:00:00Z"), "2000 is a leap year")
        XCTAssertNil(RFC3339.parse("1900-02-29T10:00:00Z"), "1900 is not")
    }
}
