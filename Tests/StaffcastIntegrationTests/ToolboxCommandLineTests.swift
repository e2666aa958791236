import Foundation
import StaffcastClient
import StaffcastCore
import StaffcastPostgres
import XCTest

/// The toolbox as an organiser meets it on the command line: `send --at/--before-start/--force`,
/// `remind`, `scheduled list|cancel`, `history`.
final class ToolboxCommandLineTests: IntegrationTestCase {
    override class var startsServer: Bool { true }

    func run(_ args: [String], token: String? = nil) throws -> CommandLineTests.Outcome {
        try CommandLineTests.execute(args, env: ["STAFFCAST_SERVER": server.http, "STAFFCAST_TOKEN": token ?? fixture.ownerToken,
                                                 "HOME": NSTemporaryDirectory()])
    }

    func testRemindSchedulesTheSeriesAndScheduledListsAndCancels() throws {
        let event = try fixture.store.createEvent(name: "Gala", startsAt: Date().addingTimeInterval(2 * 86_400))
        try fixture.store.grant(event: event, user: fixture.owner, level: .owner)
        try fixture.store.grant(event: event, user: fixture.staff, level: .staff)
        let id = event.uuidString.lowercased()
        let remind = try run(["remind", "--event", id, "--before", "1d,2h,30m", "Your shift starts soon"])
        XCTAssertEqual(remind.status, 0, remind.stderr)
        let ids = remind.stdout.split(separator: "\n").map(String.init)
        XCTAssertEqual(ids.count, 3)
        let list = try run(["scheduled", "list", "--event", id])
        XCTAssertEqual(list.status, 0, list.stderr)
        XCTAssertEqual(list.stdout.components(separatedBy: "pending").count - 1, 3, list.stdout)
        XCTAssertTrue(list.stdout.contains("Your shift starts soon"))
        let cancel = try run(["scheduled", "cancel", ids[0]])
        XCTAssertEqual(cancel.status, 0, cancel.stderr)
        XCTAssertTrue(try run(["scheduled", "list", "--event", id]).stdout.contains("cancelled"))
        // A time already passed is refused before anything is stored; so are bad times.
        let past = try run(["remind", "--event", id, "--before", "3d", "Too late"])
        XCTAssertEqual(past.status, 1)
        XCTAssertTrue(past.stderr.contains("already passed"), past.stderr)
        XCTAssertEqual(try run(["remind", "--event", id, "--before", "2 hours", "x"]).status, 1)
        // Staff may not schedule, nor list.
        let staff = try run(["remind", "--event", id, "--before", "1h", "x"], token: fixture.staffToken)
        XCTAssertEqual(staff.status, 2, "not allowed: exit 2")
        XCTAssertTrue(staff.stderr.contains("forbidden"), staff.stderr)
        XCTAssertEqual(try run(["scheduled", "list", "--event", id], token: fixture.staffToken).status, 2)
        XCTAssertEqual(try fixture.count("SELECT count(*) FROM scheduled_messages"), 3)
    }

    func testSendAtAndBeforeStart() throws {
        let id = fixture.event.uuidString.lowercased()
        let at = try run(["send", "--event", id, "--at", RFC3339.format(Date().addingTimeInterval(3_600)), "Briefing"])
        XCTAssertEqual(at.status, 0, at.stderr)
        XCTAssertNotNil(UUID(uuidString: at.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
        XCTAssertTrue(at.stderr.contains("scheduled for"))
        let noStart = try run(["send", "--event", id, "--before-start", "2h", "Briefing"])
        XCTAssertEqual(noStart.status, 1)
        XCTAssertTrue(noStart.stderr.contains("start time"), noStart.stderr)
        XCTAssertEqual(try run(["send", "--event", id, "--at", "tomorrow", "x"]).status, 1)
        XCTAssertEqual(fixture.messageCount, 0)
    }

    func testSendForceAndTheGuard() throws {
        let id = fixture.event.uuidString.lowercased()
        XCTAssertEqual(try run(["send", "--event", id, "Gates open"]).status, 0)
        let again = try run(["send", "--event", id, "Gates open"], token: fixture.adminToken)
        XCTAssertEqual(again.status, 1)
        XCTAssertTrue(again.stderr.contains("conflict"), again.stderr)
        XCTAssertEqual(try run(["send", "--event", id, "--force", "Gates open"], token: fixture.adminToken).status, 0)
        XCTAssertEqual(fixture.messageCount, 2)
    }

    /// `send --template NAME --escalate-after 2m` dropped the escalation (attack round 4).
    func testATemplateSendKeepsItsEscalation() throws {
        _ = try fixture.store.createTemplate(as: fixture.owner, name: "evac", SendRequest(
            eventID: fixture.event, message: "Evacuate by the nearest exit", messageType: "emergency", priority: "urgent"))
        let sent = try run(["send", "--event", fixture.event.uuidString.lowercased(), "--template", "evac", "--escalate-after", "2m"])
        XCTAssertEqual(sent.status, 0, sent.stderr)
        let id = try XCTUnwrap(UUID(uuidString: sent.stdout.trimmingCharacters(in: .whitespacesAndNewlines)), sent.stdout)
        XCTAssertEqual(try fixture.count("SELECT escalate_after_minutes FROM staff_messages WHERE id = $1", [id.uuidString]), 2)
    }

    func testHistoryTableAndJSON() throws {
        let id = fixture.event.uuidString.lowercased()
        let s = fixture.store
        _ = try s.send(as: fixture.owner, SendRequest(eventID: fixture.event, message: "Gate 3 opens at 9", messageType: "alert"))
        _ = try s.send(as: fixture.owner, SendRequest(eventID: fixture.event, message: "Lunch in the blue tent"))
        let old = try s.send(as: fixture.admin, SendRequest(eventID: fixture.event, message: "Gate 5 closed", expiresInMinutes: 5))
        try s.conn.execute("UPDATE staff_messages SET sent_at = now() - interval '8 days', expires_at = now() - interval '7 days' WHERE id = '\(old.id.uuidString.lowercased())'")

        let table = try run(["history", "--event", id, "--search", "gate"], token: fixture.staffToken)
        XCTAssertEqual(table.status, 0, table.stderr)
        XCTAssertTrue(table.stdout.contains("SENT"))
        XCTAssertTrue(table.stdout.contains("Gate 3 opens at 9"))
        XCTAssertFalse(table.stdout.contains("Gate 5"))
        let archive = try run(["history", "--event", id, "--search", "gate", "--include-expired", "--json"], token: fixture.staffToken)
        XCTAssertEqual(archive.status, 0, archive.stderr)
        let object = try JSONSerialization.jsonObject(with: Data(archive.stdout.utf8)) as? [String: Any]
        let texts = (object?["messages"] as? [[String: Any]])?.compactMap { $0["message"] as? String }
        XCTAssertEqual(texts, ["Gate 3 opens at 9", "Gate 5 closed"])
        let typed = try run(["history", "--event", id, "--type", "alert"], token: fixture.staffToken)
        XCTAssertTrue(typed.stdout.contains("Gate 3") && !typed.stdout.contains("Lunch"), typed.stdout)
        let bad = try run(["history", "--event", id, "--type", "gossip"], token: fixture.staffToken)
        XCTAssertEqual(bad.status, 1)
        XCTAssertEqual(try run(["history", "--event", id], token: fixture.outsiderToken).status, 2)
    }

    func testReceiptsShowEachPersonsLatestReply() throws {
        let m = try fixture.store.send(as: fixture.owner, SendRequest(eventID: fixture.event, message: "Shift at 9"))
        _ = try fixture.store.reply(as: fixture.staff, ReplyRequest(messageID: m.id, status: "on_my_way", text: nil))
        _ = try fixture.store.reply(as: fixture.staff, ReplyRequest(messageID: m.id, status: "running_late", text: "10 min"))
        let out = try run(["receipts", m.id.uuidString.lowercased()])
        XCTAssertTrue(out.stderr.isEmpty || !out.stderr.contains("staffcast:"), out.stderr)
        XCTAssertTrue(out.stdout.contains("Sam Staff  — running late: 10 min"), out.stdout)
        XCTAssertFalse(out.stdout.contains("on my way"), out.stdout)
    }
}
