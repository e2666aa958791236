import Foundation
import StaffcastClient
import StaffcastCore
@testable import StaffcastPostgres
import XCTest

/// The real `staffcast watch` binary in a real terminal (tmux, 80x24), against a real server.
final class WatchTerminalTests: IntegrationTestCase {
    let socketName = "sc-test-\(UUID().uuidString.prefix(8))"
    var home = ""

    override func setUpWithError() throws {
        try super.setUpWithError()
        try startServer()
        home = NSTemporaryDirectory() + "sc-home-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
    }

    override func tearDown() {
        _ = try? tmux(["kill-server"])
        try? FileManager.default.removeItem(atPath: home)
        super.tearDown()
    }

    @discardableResult
    func tmux(_ args: [String]) throws -> String {
        // posix_spawn + waitpid (ProcessRunner): the tmux server daemon inherits the client's
        // descriptors, which would keep Foundation's Process (and any pipe) waiting forever.
        let outcome = try ProcessRunner.run("/usr/bin/tmux", ["-L", socketName] + args)
        return outcome.output
    }

    /// Whether the tmux session still runs (it ends when `watch` quits).
    var sessionAlive: Bool { (try? ProcessRunner.run("/usr/bin/tmux", ["-L", socketName, "has-session"]))?.status == 0 }

    func startWatch(port: Int? = nil) throws {
        let command = "env -u NO_COLOR HOME=\(home) TERM=xterm-256color \(CommandLineTests.binary) watch --server http://127.0.0.1:\(port ?? server.port) --token \(fixture.staffToken) --event \(fixture.event.uuidString.lowercased())"
        try tmux(["new-session", "-d", "-x", "80", "-y", "24", command])
        XCTAssertTrue(waitForScreen { $0.contains("● connected") }, "watch did not connect:\n\(shown)")
    }

    func screen(colors: Bool = false) throws -> String {
        try tmux(["capture-pane", "-p"] + (colors ? ["-e"] : []))
    }

    /// The screen for failure messages.
    var shown: String { (try? screen()) ?? "(no screen)" }

    func waitForScreen(timeout: TimeInterval = 8, colors: Bool = false, _ condition: (String) -> Bool) -> Bool {
        waitUntil(timeout) { (try? screen(colors: colors)).map(condition) ?? false }
    }

    func send(_ text: String, priority: Priority = .normal) throws -> StaffMessage {
        try fixture.store.send(as: fixture.owner, SendRequest(eventID: fixture.event, message: text, priority: priority.rawValue))
    }

    func testAnUrgentMessageHoldsTheScreenInRedUntilAcknowledgedWhileANormalBannerLeaves() throws {
        try startWatch()
        let urgent = try send("Evacuate hall B", priority: .urgent)
        _ = try send("Coffee in the lounge", priority: .normal)
        XCTAssertTrue(waitForScreen { $0.contains("BROADCAST · URGENT · Olivia Owner") && $0.contains("Press Shift+A") }, shown)
        let colored = try screen(colors: true)
        let alarmLine = try XCTUnwrap(colored.split(separator: "\n").first { $0.contains("URGENT · Olivia") })
        XCTAssertTrue(alarmLine.contains("41m"), "the alarm is red: \(alarmLine)")
        XCTAssertFalse(try screen().contains("Coffee in the lounge"), "the alarm takes the screen")
        sleep(6) // past the 5 s a banner stays: what is tested is that this one does not leave
        try tmux(["send-keys", "d", "Enter", "q"]) // keys pressed by habit do not acknowledge
        usleep(500_000) // time for the keys to act, were they to: nothing on the screen changes when they do not
        XCTAssertTrue(try screen().contains("Press Shift+A"), "the alarm stays:\n\(shown)")
        XCTAssertTrue(try screen().contains("acknowledge this message"), shown)
        try tmux(["send-keys", "A"])
        XCTAssertTrue(waitForScreen { !$0.contains("Press Shift+A") && $0.contains(": Coffee in the lounge") }, shown)
        XCTAssertFalse(try screen().contains("BROADCAST · NORMAL · Olivia Owner"), "the normal banner left after 5 s")
        XCTAssertTrue(waitForScreen { _ in
            (try? fixture.count("SELECT count(*) FROM message_reads WHERE message_id = $1 AND user_id = $2",
                                [urgent.id.uuidString, fixture.staff.uuidString])) == 1
        }, "acknowledging marks it read")
    }

    func testAnEmergencyHoldsTheScreenUntilAcknowledgedAndAReminderBringsAMessageBack() throws {
        server.stop()
        server = try TestServer(conninfo: fixture.conninfo) { $0.escalation.intervalSecondsOverride = 5 }
        try startWatch()
        let emergency = try fixture.store.send(as: fixture.owner, SendRequest(
            eventID: fixture.event, message: "Fire at gate 4", messageType: "emergency", escalateAfterMinutes: 1))
        _ = try fixture.store.send(as: fixture.owner, SendRequest(
            eventID: fixture.event, message: "Check your radios", priority: "high", escalateAfterMinutes: 1))
        XCTAssertTrue(waitForScreen { $0.contains("EMERGENCY · NORMAL · Olivia Owner") && $0.contains("Fire at gate 4") }, shown)
        XCTAssertTrue(try screen().contains("! 1 to acknowledge"), shown)
        try tmux(["send-keys", "A"])
        XCTAssertTrue(waitForScreen { !$0.contains("Press Shift+A") && $0.contains("Check your radios") }, shown)
        // Nobody read "Check your radios": the reminder brings it onto the whole screen.
        XCTAssertTrue(waitForScreen(timeout: 15) { $0.contains("REMINDER 1") && $0.contains("Press Shift+A") }, shown)
        let reminded = try screen()
        XCTAssertTrue(reminded.contains("ALERT") == false && reminded.contains("BROADCAST · HIGH · Olivia Owner"), reminded)
        XCTAssertTrue(reminded.contains("Check your radios"), reminded)
        try tmux(["send-keys", "A"])
        XCTAssertTrue(waitForScreen { !$0.contains("Press Shift+A") && $0.contains("0 unread") }, shown)
        XCTAssertEqual(try fixture.count("SELECT count(*) FROM message_reads WHERE user_id = $1", [fixture.staff.uuidString]), 2)
        // The emergency was acknowledged before its first round: Sam was never reminded of it.
        XCTAssertEqual(try fixture.count("""
            SELECT count(*) FROM escalation_rounds WHERE message_id = $1 AND $2::uuid = ANY (unread)
            """, [emergency.id.uuidString, fixture.staff.uuidString]), 0)
    }

    func testEnterLowersTheUnreadBadgeAndTheOrganiserSeesTheReader() throws {
        let first = try send("Gates open at 10")
        _ = try send("Shuttle at gate 2")
        try startWatch()
        XCTAssertTrue(waitForScreen { $0.contains("2 unread") })
        try tmux(["send-keys", "Down", "Enter"]) // the second row is the older message
        XCTAssertTrue(waitForScreen { $0.contains("1 unread") }, shown)
        let readBy = try fixture.count("SELECT count(*) FROM staff_messages WHERE id = $1 AND $2::uuid = ANY (read_by)",
                                       [first.id.uuidString, fixture.staff.uuidString])
        XCTAssertEqual(readBy, 1)
        let receipts = try fixture.store.receipts(as: fixture.owner, message: first.id)
        XCTAssertEqual(receipts.readBy.map(\.userID), [fixture.staff])
        try tmux(["send-keys", "a"])
        XCTAssertTrue(waitForScreen { $0.contains("0 unread") }, shown)
    }

    func testAMessageSentWhileTheServerIsDownAppearsExactlyOnce() throws {
        try startWatch()
        _ = try send("Before the restart")
        XCTAssertTrue(waitForScreen { $0.contains("Before the restart") })
        let port = server.port
        server.stop()
        XCTAssertTrue(waitForScreen { $0.contains("reconnecting") || $0.contains("connecting") }, shown)
        _ = try send("Sent while the server was down")
        server = try TestServer(conninfo: fixture.conninfo) { $0.port = port }
        XCTAssertTrue(waitForScreen(timeout: 40) { $0.contains("Sent while the server was down") && $0.contains("● connected") },
                      shown)
        let text = try screen()
        XCTAssertEqual(text.components(separatedBy: "Sent while the server was down").count - 1, 2,
                       "once as the banner and once in the list:\n\(text)")
        XCTAssertEqual(text.components(separatedBy: ": Before the restart").count - 1, 1, text)
        // And after the client itself restarts, nothing is doubled either.
        try tmux(["send-keys", "q"])
        XCTAssertTrue(waitUntil(5) { !sessionAlive }, "watch did not quit:\n\(shown)")
        try startWatch(port: port)
        XCTAssertTrue(waitForScreen { $0.contains(": Before the restart") && $0.contains(": Sent while the server was down") }, shown)
        let restarted = try screen()
        XCTAssertEqual(restarted.components(separatedBy: ": Sent while the server was down").count - 1, 1, restarted)
    }

    func testTurkishScreenFromLANGWithWidthsRight() throws {
        _ = try send("Çıkış kapısı Ğ şimdi açık: öğle yemeği İçeride", priority: .high)
        let command = "env -u NO_COLOR -u LC_ALL -u LC_MESSAGES LANG=tr_TR.UTF-8 HOME=\(home) TERM=xterm-256color \(CommandLineTests.binary) watch --server http://127.0.0.1:\(server.port) --token \(fixture.staffToken) --event \(fixture.event.uuidString.lowercased())"
        try tmux(["new-session", "-d", "-x", "80", "-y", "24", command])
        XCTAssertTrue(waitForScreen { $0.contains("● bağlı") && $0.contains("1 okunmamış") }, "Turkish top bar:\n\(shown)")
        _ = try send("Tahliye: B salonu", priority: .urgent)
        // The urgent message holds the screen, in Turkish, until acknowledged.
        XCTAssertTrue(waitForScreen { $0.contains("DUYURU · ACİL · Olivia Owner") && $0.contains("Shift+A'ya basın") }, shown)
        let alarm = try screen()
        for line in alarm.components(separatedBy: "\n") { XCTAssertLessThanOrEqual(TextWidthProbe.columns(line), 80, "row too wide: \(line)") }
        XCTAssertTrue(alarm.contains("! 1 onay bekliyor"), alarm)
        try tmux(["send-keys", "A"])
        XCTAssertTrue(waitForScreen { !$0.contains("Shift+A'ya basın") && $0.contains("1 okunmamış") && $0.contains("Onaylandı") }, shown)
        try tmux(["send-keys", "k"]) // the next key puts the key line back in place of "acknowledged"
        XCTAssertTrue(waitForScreen { $0.contains("⏎ okundu") }, shown)
        let text = try screen()
        let lines = text.components(separatedBy: "\n")
        // Every row fits the 80 columns (a letter counted as two, or a byte as a column, would
        // push the bar's right end or wrap a row).
        for line in lines { XCTAssertLessThanOrEqual(TextWidthProbe.columns(line), 80, "row too wide: \(line)") }
        let top = try XCTUnwrap(lines.first)
        XCTAssertTrue(top.hasSuffix("1 okunmamış"), "the unread badge ends the top bar: '\(top)'")
        XCTAssertEqual(TextWidthProbe.columns(top), 79, "the bar fills the width (tmux trims the badge's last space): '\(top)'")
        let row = try XCTUnwrap(lines.first { $0.contains("Çıkış kapısı Ğ şimdi açık") }, text)
        XCTAssertTrue(row.contains("[YÜKSEK]"), row)
        XCTAssertTrue(row.contains("önce") || row.contains("şimdi"), row)
        XCTAssertTrue(lines.contains { $0.contains("⏎ okundu") && $0.contains("? yardım") }, "Turkish footer:\n\(text)")
        XCTAssertFalse(text.contains("unread") || text.contains("connected"), "no English left:\n\(text)")
        // Help in Turkish, and --lang overrides the environment.
        try tmux(["send-keys", "?"])
        XCTAssertTrue(waitForScreen { $0.contains("Tuşlar") && $0.contains("tüm mesajları okundu işaretler") }, shown)
        try tmux(["send-keys", "q"])
        try tmux(["send-keys", "q"])
        XCTAssertTrue(waitUntil(5) { !sessionAlive }, "watch did not quit:\n\(shown)")
        _ = try? tmux(["kill-server"])
        let english = "env -u NO_COLOR LANG=tr_TR.UTF-8 HOME=\(home) TERM=xterm-256color \(CommandLineTests.binary) watch --lang en --server http://127.0.0.1:\(server.port) --token \(fixture.staffToken) --event \(fixture.event.uuidString.lowercased())"
        try tmux(["new-session", "-d", "-x", "80", "-y", "24", english])
        XCTAssertTrue(waitForScreen { $0.contains("● connected") && $0.contains("1 unread") }, "--lang en wins:\n\(shown)")
    }

    func testNoColorKeepsTheScreenMonochrome() throws {
        let command = "env NO_COLOR=1 HOME=\(home) TERM=xterm-256color \(CommandLineTests.binary) watch --server http://127.0.0.1:\(server.port) --token \(fixture.staffToken) --event \(fixture.event.uuidString.lowercased())"
        try tmux(["new-session", "-d", "-x", "80", "-y", "24", command])
        XCTAssertTrue(waitForScreen { $0.contains("● connected") }, shown)
        _ = try send("Evacuate hall B", priority: .urgent)
        XCTAssertTrue(waitForScreen { $0.contains("URGENT · Olivia Owner") }, shown)
        let colored = try screen(colors: true)
        XCTAssertFalse(colored.contains("41m"), colored)
        XCTAssertFalse(colored.contains(fixture.staffToken), "the token is never shown")
    }

    func testLineModeAndOnMessageCommand() throws {
        let out = home + "/hook.txt"
        let p = Process()
        p.executableURL = URL(fileURLWithPath: CommandLineTests.binary)
        p.arguments = ["watch", "--server", "http://127.0.0.1:\(server.port)", "--event", fixture.event.uuidString.lowercased(),
                       "--on-message", "printf '%s|%s|%s\\n' \"$STAFFCAST_PRIORITY\" \"$STAFFCAST_MESSAGE\" \"${STAFFCAST_TOKEN:-none}\" >> \(out)"]
        p.environment = ProcessInfo.processInfo.environment.merging(["HOME": home, "STAFFCAST_TOKEN": fixture.staffToken]) { $1 }
        let stdout = home + "/stdout.txt"
        FileManager.default.createFile(atPath: stdout, contents: nil)
        p.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: stdout))
        p.standardError = FileHandle.nullDevice
        try p.run()
        defer { if p.isRunning { p.terminate() } }
        XCTAssertTrue(waitUntil(8) { server.subscribers(fixture.event) == 1 }, "watch did not subscribe")
        _ = try send("Gates open", priority: .high)
        var hook = ""
        waitUntil(8) {
            hook = (try? String(contentsOfFile: out, encoding: .utf8)) ?? ""
            return hook.contains("Gates open")
        }
        XCTAssertEqual(hook, "high|Gates open|none\n", "the hook sees the message, never the token")
        p.terminate()
        p.waitUntilExit()
        let lines = try String(contentsOfFile: stdout, encoding: .utf8).split(separator: "\n")
        let frame = try ServerFrame.decode(Array(try XCTUnwrap(lines.first).utf8))
        XCTAssertEqual(frame.message?.message, "Gates open")
    }
}

/// Terminal columns of captured text, as StaffcastClient's TextWidth counts them.
enum TextWidthProbe {
    static func columns(_ s: String) -> Int { TextWidth.columns(s) }
}
