import Foundation
@testable import StaffcastCore
import XCTest

/// `TeamName`: one rule for team and zone names, so look-alikes are one name or refused.
final class TeamNameTests: XCTestCase {
    func testNormalizeComposesAndPlainsSpaces() {
        XCTAssertEqual(TeamName.normalize("Cafe\u{301}"), "Caf\u{E9}")
        XCTAssertEqual(TeamName.normalize("Gate\u{A0}3"), "Gate 3")
        XCTAssertEqual(TeamName.normalize("  Gate \u{2009}\u{3000} 3 "), "Gate 3")
        XCTAssertEqual(TeamName.normalize("Ѕecurity"), "Ѕecurity", "other scripts are left alone")
        XCTAssertEqual(TeamName.normalize("a\tb"), "a\tb", "a tab is not a space: validateName refuses it")
    }

    func testNewNamesRefuseInvisibleCharacters() throws {
        XCTAssertEqual(try TeamName.validatedNew(" Gate\u{A0}3"), "Gate 3")
        XCTAssertEqual(try TeamName.validatedNew("\u{1F692} Medics"), "\u{1F692} Medics")
        // An emoji written with joiners (woman firefighter; woman health worker with a skin tone).
        XCTAssertEqual(try TeamName.validatedNew("👩‍🚒 Fire crew"), "👩‍🚒 Fire crew")
        XCTAssertEqual(try TeamName.validatedNew("👩🏽‍⚕️ Medics"), "👩🏽‍⚕️ Medics")
        for hidden in ["Secu\u{200B}rity", "a\u{200D}b", "a\u{200C}b", "1\u{200D}2", "\u{1F692}\u{200D}x", "x\u{200D}\u{1F692}",
                       "\u{1F692}\u{200D}", "\u{200D}\u{1F692}", "x\u{2060}", "\u{FEFF}x", "soft\u{AD}hyphen", "abc\u{202E}dcba"] {
            XCTAssertThrowsError(try TeamName.validatedNew(hidden), hidden) { e in
                XCTAssertEqual((e as? StaffcastError)?.code, .invalid)
            }
        }
        XCTAssertThrowsError(try TeamName.validatedNew(" \u{A0} "), "nothing but spaces")
    }

    func testClashesIgnoreCaseSpacingAndComposition() {
        XCTAssertTrue(TeamName.clashes("Security", "security"))
        XCTAssertTrue(TeamName.clashes("Caf\u{E9}", "CAFE\u{301}"))
        XCTAssertTrue(TeamName.clashes("Gate 3", "gate\u{A0}3"))
        XCTAssertFalse(TeamName.clashes("Security", "Ѕecurity"))
        XCTAssertFalse(TeamName.clashes("Gate 3", "Gate 30"))
    }
}
