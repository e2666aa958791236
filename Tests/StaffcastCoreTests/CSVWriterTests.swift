import StaffcastCore
import XCTest

/// RFC 4180 output and formula neutralisation of `CSVWriter`.
final class CSVWriterTests: XCTestCase {
    func testHeaderQuotingAndCRLF() {
        var csv = CSVWriter(header: ["name", "note"])
        csv.append(["Sam", "plain"])
        csv.append(["Ana, gate 3", "said \"hi\""])
        csv.append(["Li", "two\nlines"])
        csv.append(["Ayşe 門", ""])
        XCTAssertEqual(csv.text, "name,note\r\nSam,plain\r\n\"Ana, gate 3\",\"said \"\"hi\"\"\"\r\nLi,\"two\nlines\"\r\nAyşe 門,\r\n")
    }

    func testFormulaCellsAreNeutralised() {
        XCTAssertEqual(CSVWriter.field("=cmd()"), "'=cmd()")
        XCTAssertEqual(CSVWriter.field("+1"), "'+1")
        XCTAssertEqual(CSVWriter.field("-2"), "'-2")
        XCTAssertEqual(CSVWriter.field("@SUM(A1)"), "'@SUM(A1)")
        XCTAssertEqual(CSVWriter.field("=HYPERLINK(\"x\",\"y\")"), "\"'=HYPERLINK(\"\"x\"\",\"\"y\"\")\"")
        XCTAssertEqual(CSVWriter.field("a=b"), "a=b", "only a leading character counts")
        // A leading tab or carriage return is skipped by spreadsheets, which then read the formula.
        XCTAssertEqual(CSVWriter.field("\t=HYPERLINK(1)"), "'\t=HYPERLINK(1)")
        XCTAssertEqual(CSVWriter.field("\r=2+5"), "\"'\r=2+5\"")
        XCTAssertEqual(CSVWriter.field("a\tb"), "a\tb")
    }

    func testRowsHaveTheHeadersWidth() {
        var csv = CSVWriter(header: ["a", "b", "c"])
        csv.append(["1"])
        csv.append(["1", "2", "3", "4"])
        XCTAssertEqual(csv.text, "a,b,c\r\n1,,\r\n1,2,3\r\n")
    }
}
