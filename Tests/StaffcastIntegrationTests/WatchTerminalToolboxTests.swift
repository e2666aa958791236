import Foundation
import StaffcastCore
import StaffcastPostgres
import XCTest

/// The toolbox in the real terminal client (tmux, 80x24): what staff see of an edit and a retract.
extension WatchTerminalTests {
    func testAnEditAndARetractAreSeenLiveOnTheLineAndTheBanner() throws {
        try startWatch()
        let wrong = try send("Gates open at gate 3", priority: .urgent)
        _ = try send("Lunch in the blue tent")
        XCTAssertTrue(waitForScreen { $0.contains("Gates open at gate 3") && $0.contains("2 unread") && $0.contains("Shift+A") }, shown)
        // The organiser corrects the gate: the urgent message holding the screen changes, then
        // (acknowledged) its list line shows the correction too.
        _ = try server.api(fixture.ownerToken).editMessage(wrong.id, text: "Gates open at gate 4")
        XCTAssertTrue(waitForScreen { !$0.contains("gate 3") && $0.contains("Gates open at gate 4") && $0.contains("(edited)") },
                      "the alarm shows the correction:\n\(shown)")
        try tmux(["send-keys", "A"])
        XCTAssertTrue(waitForScreen { $0.contains(": Gates open at gate 4 (edited)") && $0.contains("1 unread") }, shown)
        // Then takes it back: it leaves the list.
        try server.api(fixture.ownerToken).retractMessage(wrong.id)
        XCTAssertTrue(waitForScreen { !$0.contains("Gates open") && $0.contains("1 unread") }, shown)
        XCTAssertTrue(try screen().contains("Lunch in the blue tent"), shown)
    }
}

extension WatchTerminalTests {
    func testStaffAnswerWithAKeyAndTheOrganiserSeesItLive() throws {
        let owner = try server.subscriber(fixture.ownerToken, fixture.event)
        let m = try send("Shift starts at 9 at gate 3")
        _ = try owner.expect("message")
        try startWatch()
        XCTAssertTrue(waitForScreen { $0.contains("Shift starts at 9") }, shown)
        try tmux(["send-keys", "2"]) // running late, to the selected (newest) message
        guard case .reply(let r) = try owner.expect("reply", timeout: 8) else { return XCTFail() }
        XCTAssertEqual(r.messageID, m.id)
        XCTAssertEqual(r.status, .runningLate)
        XCTAssertEqual(r.userID, fixture.staff)
        XCTAssertTrue(waitForScreen { $0.contains("Replied \"running late\"") }, shown)
        XCTAssertEqual(try server.api(fixture.ownerToken).replies(m.id).map(\.status), [.runningLate])
    }
}
