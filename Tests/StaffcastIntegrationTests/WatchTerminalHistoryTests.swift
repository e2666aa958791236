import Foundation
import StaffcastCore
@testable import StaffcastPostgres
import XCTest

/// The staff terminal after a restart, deep in history, marking all read, and on a wrong
/// event (issue 20, points 5-7): the real binary in tmux at 80x24 against a real server.
extension WatchTerminalTests {
    func sendMany(_ n: Int, _ text: (Int) -> String) throws {
        for i in 1...n { _ = try send(text(i)) }
    }

    func testAnUnreadEmergencyTakesTheScreenAgainAfterARestartHoweverOld() throws {
        try startWatch()
        _ = try fixture.store.send(as: fixture.owner, SendRequest(
            eventID: fixture.event, message: "Fire at gate 4", messageType: "emergency", escalateAfterMinutes: nil))
        XCTAssertTrue(waitForScreen { $0.contains("Fire at gate 4") && $0.contains("Press Shift+A") }, shown)
        try tmux(["send-keys", "C-c"])
        XCTAssertTrue(waitForScreen { !$0.contains("Press Shift+A") }, "Ctrl-C quits even under an alarm:\n\(shown)")
        _ = try? tmux(["kill-server"])
        // Sixty more after it: older than the context a restart fetches (50) and the list's page.
        try sendMany(60) { "Routine note \($0)" }
        try startWatch()
        XCTAssertTrue(waitForScreen { $0.contains("Fire at gate 4") && $0.contains("Press Shift+A") && $0.contains("! 1 to acknowledge") },
                      "the unacknowledged emergency takes the screen again:\n\(shown)")
        try tmux(["send-keys", "A"])
        XCTAssertTrue(waitForScreen { !$0.contains("Press Shift+A") && $0.contains("Acknowledged") }, shown)
        XCTAssertTrue(waitForScreen { !$0.contains("to acknowledge") }, shown)
    }

    func testPagingBackReachesTheFirstOf120MessagesAndTheDetailViewShowsIt() throws {
        try sendMany(120) { String(format: "Message %03d", $0) }
        try startWatch()
        XCTAssertTrue(waitForScreen { $0.contains("Message 120") }, shown)
        // PgDn through the list: pages older than the 50 of the subscribe arrive as it goes.
        try waitUntil(30) {
            if ((try? screen()) ?? "").contains("the first message of this event") { return true }
            try tmux(["send-keys", "NPage"])
            return false
        }
        let bottom = try screen()
        XCTAssertTrue(bottom.contains(": Message 001") && bottom.contains("the first message of this event"), bottom)
        try tmux(["send-keys", "Up", "Enter"]) // Message 002, in full
        XCTAssertTrue(waitForScreen { $0.contains("From: Olivia Owner") && $0.contains(" Message 002") && $0.contains("read by") }, shown)
        XCTAssertTrue(waitForScreen { $0.contains("119 unread") }, "opening it marked it read:\n\(shown)")
        try tmux(["send-keys", "Escape"])
        XCTAssertTrue(waitForScreen { $0.contains(": Message 003") && !$0.contains("From: Olivia Owner") }, shown)
    }

    func testMarkAllReadOf200LeavesNothingUnreadInOneRequest() throws {
        try sendMany(200) { "Note number \($0)" }
        try startWatch()
        XCTAssertTrue(waitForScreen { $0.contains("200 unread") }, shown)
        try tmux(["send-keys", "a"])
        XCTAssertTrue(waitForScreen { $0.contains(" 0 unread") && $0.contains("200 marked read") }, shown)
        XCTAssertFalse(try screen().contains("Too many"), shown)
        XCTAssertEqual(try fixture.count("SELECT count(*) FROM message_reads WHERE user_id = $1", [fixture.staff.uuidString]), 200)
        XCTAssertEqual(try fixture.count("SELECT count(*) FROM staff_messages WHERE NOT ($1::uuid = ANY (read_by))",
                                         [fixture.staff.uuidString]), 0)
    }

    /// Runs watch outside tmux (stdout a pipe: line mode), bounded by `timeout` so a watch that
    /// runs on fails the test instead of hanging it (status 124).
    func watchLines(token: String, event: String, extra: [String] = []) throws -> ProcessRunner.Outcome {
        try ProcessRunner.run("/usr/bin/env", ["HOME=\(home)", "/usr/bin/timeout", "30", CommandLineTests.binary, "watch",
                                               "--server", "http://127.0.0.1:\(server.port)", "--token", token, "--event", event] + extra)
    }

    func testWatchOnAWrongOrForbiddenEventExits2WithTheReason() throws {
        let nowhere = UUID().uuidString.lowercased()
        let json = try watchLines(token: fixture.staffToken, event: nowhere, extra: ["--json"])
        XCTAssertEqual(json.status, 2, json.output) // not found or not allowed, as --help says
        XCTAssertTrue(json.output.contains("\"op\":\"error\"") && json.output.contains("not_found"), json.output)
        XCTAssertTrue(json.output.contains("staffcast: cannot watch event \(nowhere): There is no event with that id that you can see."),
                      json.output)
        // An event that exists but is not Oscar's: the same answer, the same exit.
        let forbidden = try watchLines(token: fixture.outsiderToken, event: fixture.event.uuidString.lowercased())
        XCTAssertEqual(forbidden.status, 2, forbidden.output)
        XCTAssertTrue(forbidden.output.contains("There is no event with that id that you can see."), forbidden.output)
        // And on the screen: the terminal is restored and the reason printed.
        let command = "env HOME=\(home) TERM=xterm-256color \(CommandLineTests.binary) watch --server http://127.0.0.1:\(server.port) --token \(fixture.staffToken) --event \(nowhere); echo exit=$?; sleep 60"
        try tmux(["new-session", "-d", "-x", "80", "-y", "24", command])
        XCTAssertTrue(waitForScreen(timeout: 15) { $0.contains("exit=2") }, shown)
        XCTAssertTrue(try screen().contains("staffcast: cannot watch event \(nowhere)"), shown)
    }
}
