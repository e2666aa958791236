import Foundation
@testable import StaffcastCore
import XCTest

/// `AudienceCheck`: the refusal of a send to empty teams, and why a scheduled one is not sent.
final class AudienceCheckTests: XCTestCase {
    func testTheRefusalNamesTheEmptyTeams() {
        let e = AudienceCheck.emptyRefusal(["Medics", "Gate 9", "Bar"])
        XCTAssertEqual(e.code, .conflict)
        XCTAssertTrue(e.message.hasPrefix("No one is in 'Medics', 'Gate 9' or 'Bar' apart from you"), e.message)
    }

    func testAScheduledSendGoesOnlyToTeamsThatExistAndHoldSomeone() {
        XCTAssertNil(AudienceCheck.scheduledNote(teams: [], missing: [], anyoneThere: false), "the whole event always goes")
        XCTAssertNil(AudienceCheck.scheduledNote(teams: ["A"], missing: [], anyoneThere: true))
        XCTAssertEqual(AudienceCheck.scheduledNote(teams: ["A", "B"], missing: ["B"], anyoneThere: true),
                       "not sent: 'B' no longer exists in this event")
        XCTAssertEqual(AudienceCheck.scheduledNote(teams: ["A", "B"], missing: ["A", "B"], anyoneThere: false),
                       "not sent: 'A' and 'B' no longer exist in this event")
        XCTAssertEqual(AudienceCheck.scheduledNote(teams: ["A"], missing: [], anyoneThere: false),
                       "not sent: no one was in 'A' apart from the sender at its time")
    }
}
