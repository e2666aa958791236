import Foundation
import StaffcastCore
import StaffcastPostgres
import XCTest

/// Polls in the real terminal client (tmux, 80x24): staff answer with a key.
extension WatchTerminalTests {
    func testStaffAnswerAPollWithAKey() throws {
        let owner = try server.subscriber(fixture.ownerToken, fixture.event)
        var request = try SendRequest(eventID: fixture.event, message: "Water at your gate?")
        request.poll = try Poll(options: ["Yes", "No", "Running low"])
        let m = try fixture.store.send(as: fixture.owner, request)
        _ = try owner.expect("message")
        try startWatch()
        XCTAssertTrue(waitForScreen { $0.contains("Water at your") && $0.contains("[1 Yes · 2 No · 3 Running low]") }, shown)
        try tmux(["send-keys", "3"])
        guard case .pollTally(let tally) = try owner.expect("poll_tally", timeout: 8) else { return XCTFail() }
        XCTAssertEqual(tally.messageID, m.id)
        XCTAssertEqual(tally.counts, [0, 0, 1])
        XCTAssertTrue(waitForScreen { $0.contains("3 Running low ✓") }, shown)
        let report = try server.api(fixture.ownerToken).answers(message: m.id).report
        XCTAssertEqual(report.answers.map(\.userID), [fixture.staff])
        XCTAssertEqual(report.answers.first?.option, 2)
    }
}
