import StaffcastCore
import XCTest

/// One rule for control characters, ASCII's and Unicode's alike (docs/protocol.md, "Text").
final class TextRulesTests: XCTestCase {
    func testEveryC0C1AndSeparatorIsRefused() {
        var refused: [UInt32] = Array(0x00...0x08) + [0x0B, 0x0C] + Array(0x0E...0x1F) + [0x7F]
        refused += Array(0x80...0x9F) + [0x2028, 0x2029]
        for value in refused {
            let scalar = Unicode.Scalar(value)!
            for text in ["a\(Character(scalar))b", "\(Character(scalar))", "end\(Character(scalar))"] {
                XCTAssertEqual(TextRules.forbiddenControlCharacter(in: text), scalar, "U+\(String(value, radix: 16))")
                XCTAssertThrowsError(try TextRules.requireStorable(text, field: "message")) { error in
                    XCTAssertEqual((error as? StaffcastError)?.code, .invalid)
                    XCTAssertTrue((error as? StaffcastError)?.message.contains(String(format: "U+%04X", value)) ?? false,
                                  "the refusal names the character")
                }
            }
        }
    }

    func testNextLineAndLineSeparatorInSendAndReply() {
        let event = UUID()
        for text in ["first\u{85}second", "first\u{2028}second", "first\u{2029}second", "csi\u{9B}31m"] {
            XCTAssertThrowsError(try SendRequest(eventID: event, message: text)) {
                XCTAssertEqual(($0 as? StaffcastError)?.code, .invalid)
            }
        }
    }

    func testTextNewLinesTabsAndOtherUnicodeAreKept() throws {
        let allowed = "line one\nline two\r\n\ttabbed · Zoë ✓ 日本 🎉 \u{A0}nbsp \u{200B}zwsp \u{A0}\u{2027}"
        XCTAssertNil(TextRules.forbiddenControlCharacter(in: allowed))
        XCTAssertNoThrow(try TextRules.requireStorable(allowed, field: "message"))
        for value: UInt32 in [0x09, 0x0A, 0x0D, 0x20, 0x7E, 0xA0, 0xA1, 0x2027, 0x10FFFF] {
            XCTAssertFalse(TextRules.isForbidden(Unicode.Scalar(value)!), "U+\(String(value, radix: 16))")
        }
    }

    /// Names are printed one to a line (receipts, reach, lists): a line break in one would
    /// read as another person ("Eve\n  ✓ Fake Person", found by an attack from outside).
    func testANameIsOneLineAndHasNoTerminalEscapes() {
        for name in ["Eve\n  ✓ Fake Person", "Eve\r\nFake", "Eve\rFake", "Eve\tFake", "Mal\u{1B}]0;PWNED\u{07}ory", "Del\u{7F}"] {
            XCTAssertThrowsError(try TextRules.requireOneLine(name, field: "display name"), name.debugDescription) {
                XCTAssertEqual(($0 as? StaffcastError)?.code, .invalid)
            }
        }
        XCTAssertNoThrow(try TextRules.requireOneLine("Zoë Ünal-O'Brien 日本 ✓", field: "display name"))
        // Team and template names keep to the same rule ("\r\n" is one Character in Swift).
        for name in ["Gate\r\nA", "Gate\nA", "Gate\tA"] {
            XCTAssertThrowsError(try TextRules.requireName(name, of: "team", without: ["/"]), name.debugDescription)
        }
    }

    /// A right-to-left override in a name makes the rest of its receipt line read backwards.
    func testANameHasNoTextDirectionControlsButRightToLeftNamesAreFine() {
        for name in ["Eve\u{202E}nimda", "Eve\u{2066}x\u{2069}", "\u{202B}Sam"] {
            XCTAssertThrowsError(try TextRules.requireOneLine(name, field: "display name"), name.debugDescription) {
                XCTAssertTrue(($0 as? StaffcastError)?.message.contains("text-direction") ?? false, "\($0)")
            }
        }
        XCTAssertNoThrow(try TextRules.requireOneLine("שרה כהן", field: "display name"))
        XCTAssertNoThrow(try TextRules.requireOneLine("سارة", field: "display name"))
    }

    /// "Yes " and "Yes" were two options that look alike; an option with a line break printed
    /// a line of its own in `staffcast answers`.
    func testPollOptionsAreTrimmedOneLineAndDistinct() throws {
        XCTAssertEqual(try Poll(options: [" Yes ", "No"]).options, ["Yes", "No"])
        XCTAssertThrowsError(try Poll(options: ["Yes", "Yes  "])) {
            XCTAssertEqual(($0 as? StaffcastError)?.message, "Two poll options are the same.")
        }
        XCTAssertThrowsError(try Poll(options: ["Yes\n  3 Fake", "No"]))
        XCTAssertThrowsError(try Poll(options: ["   ", "No"]))
    }
}
