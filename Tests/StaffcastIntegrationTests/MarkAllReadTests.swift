import Foundation
import StaffcastClient
import StaffcastCore
import StaffcastPostgres
import XCTest

/// `mark_all_read`: one request marks a whole event read (up to the seq the client saw),
/// leaves emergency and urgent messages to be acknowledged one by one, and answers outsiders
/// as if the event did not exist.
final class MarkAllReadTests: IntegrationTestCase {
    override class var startsServer: Bool { true }
    override class var secondStaffName: String? { "Vera VIP" }

    func send(_ text: String, type: String? = nil, priority: String? = nil, teams: [String]? = nil) throws -> StaffMessage {
        var request = try SendRequest(eventID: fixture.event, message: text, messageType: type, priority: priority)
        request.teams = teams ?? []
        return try fixture.store.send(as: fixture.owner, request)
    }

    func markAll(_ socket: TestSocket) throws -> (marked: Int, unread: Int) {
        try socket.send(["op": "mark_all_read", "event_id": fixture.event.uuidString.lowercased()])
        guard case .readAll(_, _, _, let marked, let unread, _) = try socket.expect("read") else {
            XCTFail("not the mark-all reply")
            return (-1, -1)
        }
        return (marked, unread)
    }

    /// A team message is marked (and counted) only for its audience: a staff member outside the
    /// team neither lands in its `read_by` nor sees it in the count the reply gives.
    func testMarkAllKeepsToTheReadersAudience() throws {
        _ = try fixture.store.createTeam(as: fixture.owner, event: fixture.event, name: "VIP", kind: .team)
        try fixture.store.addTeamMember(as: fixture.owner, event: fixture.event, team: "VIP", member: secondStaff.id)
        let vip = try send("vip normal prio", teams: ["VIP"])
        _ = try send("vip urgent", priority: "urgent", teams: ["VIP"]) // never marked by mark-all
        let everyone = try send("Gates open")

        let outside = try server.connect(fixture.staffToken)
        XCTAssertEqual(try outside.subscribe(fixture.event).unread, 1)
        XCTAssertEqual(try markAll(outside).marked, 1)
        XCTAssertEqual(try fixture.count("SELECT read_count FROM staff_messages WHERE id = $1", [vip.id.uuidString]), 0)
        XCTAssertEqual(try fixture.count("SELECT count(*) FROM message_reads WHERE user_id = $1", [fixture.staff.uuidString]), 1)
        XCTAssertEqual(try fixture.store.receipts(as: fixture.owner, message: vip.id).readBy.count, 0)
        XCTAssertEqual(try markAll(outside).unread, 0, "the hidden urgent team message is not counted")
        XCTAssertEqual(try server.connect(fixture.staffToken).subscribe(fixture.event).unread, 0)

        let member = try server.connect(secondStaff.token)
        XCTAssertEqual(try member.subscribe(fixture.event).unread, 3)
        let (marked, unread) = try markAll(member)
        XCTAssertEqual(marked, 2, "the team message and the one to everyone")
        XCTAssertEqual(unread, 1, "the urgent team message is left to acknowledge")
        XCTAssertEqual(try server.connect(secondStaff.token).subscribe(fixture.event).unread, 1)
        XCTAssertEqual(try fixture.count("SELECT read_count FROM staff_messages WHERE id = $1", [vip.id.uuidString]), 1)
        XCTAssertEqual(try fixture.count("SELECT read_count FROM staff_messages WHERE id = $1", [everyone.id.uuidString]), 2)
    }

    func testOneRequestMarks200ReadAndLeavesOnlyWhatMustBeAcknowledged() throws {
        var last: StaffMessage?
        for i in 1...200 { last = try send("Note \(i)") }
        let fire = try send("Fire at gate 4", type: "emergency")
        let urgent = try send("Evacuate hall B", priority: "urgent")
        let after = try send("Sent after the client looked") // beyond through_seq: stays unread
        let owner = try server.subscriber(fixture.ownerToken, fixture.event)
        let staff = try server.connect(fixture.staffToken)
        XCTAssertEqual(try staff.subscribe(fixture.event).unread, 203)
        try staff.send(["op": "mark_all_read", "event_id": fixture.event.uuidString.lowercased(), "through_seq": urgent.seq, "ref": "all"])
        guard case .readAll(let ref, let event, let through, let marked, let unread, _) = try staff.expect("read", timeout: 15) else {
            return XCTFail("not the mark-all reply")
        }
        XCTAssertEqual(ref, "all")
        XCTAssertEqual(event, fixture.event)
        XCTAssertEqual(through, urgent.seq)
        XCTAssertEqual(marked, 200)
        XCTAssertEqual(unread, 3, "the emergency, the urgent one and the later one")
        XCTAssertEqual(try fixture.count("SELECT count(*) FROM message_reads WHERE user_id = $1", [fixture.staff.uuidString]), 200)
        XCTAssertEqual(try fixture.count("SELECT count(*) FROM staff_messages WHERE $1::uuid = ANY (read_by)", [fixture.staff.uuidString]), 200)
        for id in [fire.id, urgent.id, after.id] {
            XCTAssertEqual(try fixture.count("SELECT count(*) FROM message_reads WHERE user_id = $1 AND message_id = $2",
                                             [fixture.staff.uuidString, id.uuidString]), 0)
        }
        // The organiser's receipts come as for single marks (the last one among them).
        let deadline = Date().addingTimeInterval(10)
        var receipts = 0
        while Date() < deadline, receipts < 200, let frame = try owner.nextOrNil(timeout: deadline.timeIntervalSinceNow) {
            if case .receipt(let r) = frame, r.userID == fixture.staff { receipts += 1 }
        }
        XCTAssertEqual(receipts, 200)
        XCTAssertNotNil(last)
        // Again: nothing new to mark, nothing counted twice; without through_seq: all (but the two).
        try staff.send(["op": "mark_all_read", "event_id": fixture.event.uuidString.lowercased(), "ref": "again"])
        guard case .readAll(_, _, let through2, let marked2, let unread2, _) = try staff.expect("read") else { return XCTFail() }
        XCTAssertEqual(through2, after.seq)
        XCTAssertEqual(marked2, 1)
        XCTAssertEqual(unread2, 2)
        XCTAssertEqual(try fixture.count("SELECT read_count FROM staff_messages WHERE id = $1", [last!.id.uuidString]), 1)
    }

    func testAnOutsiderOrAnUnknownEventGetsNotFoundAndNothingChanges() throws {
        _ = try send("Gates open")
        let outsider = try server.connect(fixture.outsiderToken)
        for (event, ref) in [(fixture.event, "theirs"), (UUID(), "none")] {
            try outsider.send(["op": "mark_all_read", "event_id": event.uuidString.lowercased(), "ref": ref])
            guard case .error(let r, let e) = try outsider.expect("error") else { return XCTFail() }
            XCTAssertEqual(r, ref)
            XCTAssertEqual(e.code, .notFound)
            XCTAssertEqual(e.message, "There is no event with that id that you can see.")
        }
        XCTAssertEqual(try fixture.count("SELECT count(*) FROM message_reads"), 0)
        try outsider.send(["op": "mark_all_read", "event_id": "nope", "ref": "bad"])
        guard case .error(_, let e) = try outsider.expect("error") else { return XCTFail() }
        XCTAssertEqual(e.code, .invalid)
    }
}
