import StaffcastCore
import XCTest

final class HelpTextTests: XCTestCase {
    func testWrapsAtSpacesWithinTheWidthAndIndentsEveryLine() {
        let text = "Requests one connection may have waiting on the database; at this many the server stops reading it."
        let wrapped = HelpText.wrap(text, indent: 6, width: 40)
        let lines = wrapped.split(separator: "\n")
        XCTAssertGreaterThan(lines.count, 2)
        for line in lines {
            XCTAssertLessThanOrEqual(line.count, 40, String(line))
            XCTAssertTrue(line.hasPrefix("      ") && !line.hasPrefix("       "), String(line))
        }
        XCTAssertEqual(wrapped.split(whereSeparator: { $0 == " " || $0 == "\n" }).joined(separator: " "), text)
    }

    func testALongWordStandsAloneRatherThanBeingCut() {
        XCTAssertEqual(HelpText.wrap("see https://example.org/a/very/long/path now", width: 12),
                       "see\nhttps://example.org/a/very/long/path\nnow")
    }

    func testTheSettingsHelpFitsAnEightyColumnTerminal() {
        for line in ConfigReference.flagHelp().split(separator: "\n") {
            XCTAssertLessThanOrEqual(line.count, HelpText.width, String(line))
        }
    }
}
