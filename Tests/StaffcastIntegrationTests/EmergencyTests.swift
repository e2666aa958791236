import Foundation
import StaffcastClient
import StaffcastCore
import StaffcastPostgres
import StaffcastServer
import XCTest

/// Emergencies that must be read (issue 10): reach across servers, live receipts, reminders
/// and escalation (once per round across servers and restarts), the audit trail, and the
/// command line around them. Real PostgreSQL, real servers, real sockets.
final class EmergencyTests: IntegrationTestCase {
    /// A second staff member who never reads unless told to.
    override class var secondStaffName: String? { "Li Staff" }
    var li: UUID { secondStaff.id }
    var liToken: String { secondStaff.token }

    /// A server whose escalation interval is `seconds` (the test/ops knob).
    func start(intervalSeconds: Int = 2, maxRounds: Int = 3) throws -> TestServer {
        try startServer {
            $0.escalation.intervalSecondsOverride = intervalSeconds
            $0.escalation.maxRounds = maxRounds
            $0.nodeID = "test-\(UUID().uuidString.prefix(8))" // servers in one process: tell them apart
        }
    }

    func id(_ u: UUID) -> String { u.uuidString.lowercased() }

    /// Sends an emergency over HTTP as the owner (so the server's default escalation applies).
    func sendEmergency(_ server: TestServer, _ text: String = "Evacuate hall B") throws -> StaffMessage {
        try server.api(fixture.ownerToken).sendMessage(event: fixture.event, message: text, type: "emergency",
                                                       priority: "urgent", expiresInMinutes: nil)
    }

    func markRead(_ socket: TestSocket, _ message: UUID) throws {
        try socket.send(["op": "mark_read", "message_id": id(message)])
        _ = try socket.expect("read")
    }

    func rounds(_ message: UUID) throws -> [Int] {
        let r = try fixture.store.conn.query("SELECT round FROM escalation_rounds WHERE message_id = $1 ORDER BY seq", [id(message)])
        return (0..<r.rowCount).compactMap { r.int($0, 0) }
    }

    // MARK: reach

    func testReachCountsClientsOnTwoServersAndNamesWhoIsNot() throws {
        let a = try start(), b = try start()
        let staffOnB = try b.subscriber(fixture.staffToken, fixture.event)
        let adminOnA = try a.subscriber(fixture.adminToken, fixture.event)
        // Sam is on b: a learns it from the presence table (refreshed every 3 s).
        var reach = try a.api(fixture.ownerToken).reach(event: fixture.event)
        XCTAssertTrue(try waitUntil(10) {
            reach = try a.api(fixture.ownerToken).reach(event: fixture.event)
            return reach.connected == 2
        }, "\(reach)")
        XCTAssertEqual(reach.roster, 4) // owner, admin, Sam, Li; not the outsider
        XCTAssertEqual(Set(reach.online.map(\.userID)), [fixture.admin, fixture.staff])
        XCTAssertEqual(Set(reach.offline.map(\.displayName)), ["Olivia Owner", "Li Staff"])
        XCTAssertTrue(reach.offline.allSatisfy { $0.lastSeen == nil }, "never connected: never seen")
        // The contract's JSON shape.
        let raw = try a.api(fixture.ownerToken).call("GET", "/v1/events/\(id(fixture.event))/reach")
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: raw) as? [String: Any])
        XCTAssertEqual(object["roster"] as? Int, 4)
        XCTAssertEqual(object["connected"] as? Int, 2)
        let offline = try XCTUnwrap(object["offline"] as? [[String: Any]])
        XCTAssertEqual(Set(offline.map { Set($0.keys) }), [["user_id", "display_name", "last_seen"]])
        // Staff may not see it; to an outsider the event does not exist.
        XCTAssertEqual(try a.api(fixture.staffToken).raw("GET", "/v1/events/\(id(fixture.event))/reach").status, 403)
        XCTAssertEqual(try a.api(fixture.outsiderToken).raw("GET", "/v1/events/\(id(fixture.event))/reach").status, 404)
        XCTAssertEqual(try a.api(fixture.ownerToken).raw("GET", "/v1/events/\(id(UUID()))/reach").status, 404)

        // Sam leaves: b stops listing him, and reach then shows when he was last seen.
        staffOnB.close()
        XCTAssertTrue(try waitUntil(10) {
            reach = try a.api(fixture.ownerToken).reach(event: fixture.event)
            return reach.connected == 1 && reach.offline.contains { $0.userID == fixture.staff && $0.lastSeen != nil }
        }, "\(reach)")

        // staffcast send: only the id on stdout, the reach line on stderr.
        let out = try CommandLineTests.execute(["send", "--server", a.http, "--event", id(fixture.event), "Gates open"],
                                               env: ["STAFFCAST_TOKEN": fixture.ownerToken])
        XCTAssertEqual(out.status, 0, out.stderr)
        XCTAssertNotNil(UUID(uuidString: out.stdout.trimmingCharacters(in: .whitespacesAndNewlines)), out.stdout)
        XCTAssertEqual(out.stdout.split(separator: "\n").count, 1)
        XCTAssertTrue(out.stderr.contains("delivered live to 1 of 3 recipients; not connected: "), out.stderr)
        XCTAssertTrue(out.stderr.contains("Li Staff") && out.stderr.contains("Sam Staff"), out.stderr)
        XCTAssertFalse(out.stderr.contains("Olivia"), "the sender is left out: \(out.stderr)")
        // staffcast reach prints it before sending.
        let shown = try CommandLineTests.execute(["reach", "--server", a.http, "--event", id(fixture.event)],
                                                 env: ["STAFFCAST_TOKEN": fixture.ownerToken])
        XCTAssertEqual(shown.status, 0, shown.stderr)
        XCTAssertTrue(shown.stdout.hasPrefix("1 of 4 people on the event connected now"), shown.stdout)
        XCTAssertTrue(shown.stdout.contains("Li Staff  never seen"), shown.stdout)
        XCTAssertTrue(shown.stdout.contains("Sam Staff  last seen"), shown.stdout)
    }

    // MARK: receipts

    func testAReadSendsAReceiptToAdminsOnEveryServerAndNeverToStaff() throws {
        let a = try start(intervalSeconds: 3_600), b = try start(intervalSeconds: 3_600)
        let adminOnB = try b.subscriber(fixture.adminToken, fixture.event)
        let liOnB = try b.subscriber(liToken, fixture.event)
        let samOnA = try a.subscriber(fixture.staffToken, fixture.event)
        let message = try sendEmergency(a)
        for socket in [adminOnB, liOnB, samOnA] { XCTAssertEqual(try socket.expect("message").message?.id, message.id) }

        try markRead(samOnA, message.id)
        guard case .receipt(let receipt) = try adminOnB.expect("receipt") else { return XCTFail() }
        XCTAssertEqual(receipt, ReadReceipt(messageID: message.id, eventID: fixture.event, userID: fixture.staff,
                                            displayName: "Sam Staff", readCount: 1))
        try liOnB.expectSilence(1) // staff never get receipts
        try samOnA.expectSilence(0.5, except: ["marked_read"]) // the reader's own devices hear of the read, nothing else
        // Reading again changes nothing and sends nothing.
        try markRead(samOnA, message.id)
        try adminOnB.expectSilence(1)

        // A level change is followed: Adam made staff gets no more receipts.
        try fixture.store.grant(event: fixture.event, user: fixture.admin, level: .staff)
        // The change reaches b through the change feed, which applies access changes before the
        // messages read with them: once a message sent after it reaches Adam on b, b knows.
        _ = try fixture.store.send(as: fixture.owner, SendRequest(eventID: fixture.event, message: "after the level change"))
        XCTAssertEqual(try adminOnB.expect("message").message?.message, "after the level change")
        try markRead(liOnB, message.id)
        try adminOnB.expectSilence(1)

        // The receipts list, and the CLI over it.
        let list = try a.api(fixture.ownerToken).receipts(message: message.id).list
        XCTAssertEqual(Set(list.readBy.map(\.userID)), [fixture.staff, li])
        XCTAssertEqual(list.unreadBy.map(\.userID), [fixture.admin])
        let out = try CommandLineTests.execute(["receipts", "--server", a.http, id(message.id)],
                                               env: ["STAFFCAST_TOKEN": fixture.ownerToken])
        XCTAssertEqual(out.status, 0, out.stderr)
        XCTAssertTrue(out.stdout.contains("read by 2 of 3"), out.stdout)
        XCTAssertTrue(out.stdout.contains("not read by 1:\n  · Adam Admin"), out.stdout)
        let staffTry = try CommandLineTests.execute(["receipts", "--server", a.http, id(message.id)],
                                                    env: ["STAFFCAST_TOKEN": fixture.staffToken])
        XCTAssertNotEqual(staffTry.status, 0)
        XCTAssertTrue(staffTry.stderr.contains("admins and owners"), staffTry.stderr)
    }

    func testReceiptsWatchFillsInAndEndsWhenEveryoneHasRead() throws {
        let a = try start(intervalSeconds: 3_600)
        let message = try sendEmergency(a)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: CommandLineTests.binary)
        p.arguments = ["receipts", "--server", a.http, id(message.id), "--watch", "--json"]
        p.environment = ProcessInfo.processInfo.environment.merging(["STAFFCAST_TOKEN": fixture.ownerToken]) { $1 }
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        try p.run()
        defer { if p.isRunning { p.terminate() } }
        XCTAssertTrue(waitUntil(10) { a.subscribers(fixture.event) == 1 }, "receipts --watch never subscribed")
        for (user, token) in [(fixture.staff, fixture.staffToken), (li, liToken), (fixture.admin, fixture.adminToken)] {
            let s = try a.connect(token)
            try markRead(s, message.id)
            s.close()
            _ = user
        }
        XCTAssertTrue(waitUntil(15) { !p.isRunning }, "receipts --watch ends once everyone has read")
        XCTAssertEqual(p.terminationStatus, 0)
        let lines = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).split(separator: "\n")
        XCTAssertGreaterThanOrEqual(lines.count, 2, "the first list and at least one redraw")
        let last = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(try XCTUnwrap(lines.last).utf8)) as? [String: Any])
        XCTAssertEqual(last["read_count"] as? Int, 3)
        XCTAssertEqual((last["unread_by"] as? [Any])?.count, 0)
    }

    // MARK: escalation

    func testEscalationRemindsOnlyNonReadersNamesThemToAdminsAndStopsOnceAllHaveRead() throws {
        // 4 s: room for Sam and Adam to read first even on a loaded machine.
        let server = try start(intervalSeconds: 4)
        let sam = try server.subscriber(fixture.staffToken, fixture.event)
        let liSocket = try server.subscriber(liToken, fixture.event)
        let admin = try server.subscriber(fixture.adminToken, fixture.event)
        let owner = try server.connect(fixture.ownerToken)

        let message = try sendEmergency(server)
        XCTAssertEqual(message.escalateAfterMinutes, 5, "emergencies escalate by default")
        try markRead(sam, message.id)
        try markRead(admin, message.id)
        _ = try liSocket.expect("message")

        // Round 1: a reminder to Li only; an escalation notification naming Li to each admin and owner.
        guard case .reminder(let reminded, let round) = try liSocket.expect("reminder", timeout: 12) else { return XCTFail() }
        XCTAssertEqual(reminded.id, message.id)
        XCTAssertEqual(round, 1)
        XCTAssertFalse(reminded.read)
        for socket in [admin, owner] {
            guard case .notification(let n) = try socket.expect("notification", timeout: 5) else { return XCTFail() }
            XCTAssertEqual(n.type, "escalation")
            XCTAssertTrue(n.message.contains("Li Staff"), n.message)
            guard case .object(let data)? = n.data else { return XCTFail("data: \(String(describing: n.data))") }
            XCTAssertEqual(data["message_id"], .string(id(message.id)))
            XCTAssertEqual(data["round"], .number(1))
            XCTAssertEqual(data["unread_by"], .array([.object(["user_id": .string(id(li)), "display_name": .string("Li Staff")])]))
        }
        try sam.expectSilence(0.3, except: ["marked_read"]) // a reader is never reminded (their own read's notice may still arrive)

        // Li reads: no further round, ever (the escalation ends when round 2 falls due).
        try markRead(liSocket, message.id)
        XCTAssertTrue(try waitUntil(15) { try fixture.store.escalationState(message: message.id)?.finished == "all_read" })
        XCTAssertEqual(try rounds(message.id), [1])
        try liSocket.expectSilence(0.5, except: ["marked_read"])
        XCTAssertEqual(try fixture.count("SELECT count(*) FROM notifications WHERE type = 'escalation'"), 2)

        // Everything is in the audit log of the event.
        let audit = try fixture.store.auditLog(limit: 100, event: fixture.event)
        let actions = audit.map(\.action)
        XCTAssertTrue(actions.contains("message_send"), "\(actions)")
        XCTAssertEqual(audit.filter { $0.action == "message_read" }.compactMap(\.userID).sorted(),
                       [id(fixture.staff), id(fixture.admin), id(li)].sorted())
        XCTAssertEqual(audit.filter { $0.action == "reminder" }.compactMap(\.userID), [id(li)])
        let escalation = try XCTUnwrap(audit.first { $0.action == "escalation" })
        XCTAssertTrue(escalation.detail?.contains("Li Staff") == true, "\(escalation)")
        let cli = try CommandLineTests.execute(["admin", "audit", "--event", id(fixture.event),
                                                "--database-url", fixture.conninfo])
        XCTAssertEqual(cli.status, 0, cli.stderr)
        for action in ["message_send", "message_read", "reminder", "escalation"] {
            XCTAssertTrue(cli.stdout.contains(action), "\(action) missing:\n\(cli.stdout)")
        }
    }

    func testAMessageWithoutEscalationOrAlreadyReadByAllNeverEscalates() throws {
        let server = try start(intervalSeconds: 1)
        let plain = try server.api(fixture.ownerToken).sendMessage(event: fixture.event, message: "Coffee", type: nil,
                                                                   priority: nil, expiresInMinutes: nil)
        XCTAssertNil(plain.escalateAfterMinutes)
        // Asked for explicitly on a broadcast, over the query string.
        let r = try server.api(fixture.ownerToken).raw("POST", "/v1/events/\(id(fixture.event))/messages",
                                                       query: ["escalate_after_minutes": "2"], body: Data("Check in".utf8),
                                                       contentType: "text/plain")
        XCTAssertEqual(r.status, 201)
        let asked = try JSONDecoder().decode(StaffMessage.self, from: r.body)
        XCTAssertEqual(asked.escalateAfterMinutes, 2)
        for (token, _) in [(fixture.staffToken, 0), (liToken, 0), (fixture.adminToken, 0)] {
            let s = try server.connect(token)
            try markRead(s, asked.id)
            s.close()
        }
        // Once the asked-for one has ended (when its round 1 fell due), the plain one, sent
        // first, has had its chance to escalate too.
        XCTAssertTrue(try waitUntil(10) { try fixture.store.escalationState(message: asked.id)?.finished == "all_read" })
        XCTAssertEqual(try rounds(plain.id), [])
        XCTAssertEqual(try rounds(asked.id), [])
        XCTAssertNil(try fixture.store.escalationState(message: plain.id))
        // Out of range is refused with a sentence.
        let bad = try server.api(fixture.ownerToken).raw("POST", "/v1/events/\(id(fixture.event))/messages",
                                                         body: Data(#"{"message":"x","escalate_after_minutes":0}"#.utf8),
                                                         contentType: "application/json")
        XCTAssertEqual(bad.status, 400)
        XCTAssertTrue(String(decoding: bad.body, as: UTF8.self).contains("escalate_after_minutes"))
    }

    func testTwoServersProduceEachRoundExactlyOnce() throws {
        let a = try start(intervalSeconds: 1), b = try start(intervalSeconds: 1)
        let liOnB = try b.subscriber(liToken, fixture.event)
        let liOnA = try a.subscriber(liToken, fixture.event)
        let message = try sendEmergency(a)
        XCTAssertTrue(try waitUntil(15) { try fixture.store.escalationState(message: message.id)?.finished == "max_rounds" })
        XCTAssertEqual(try rounds(message.id), [1, 2, 3])
        // Each round: one notification per admin and owner, no more.
        XCTAssertEqual(try fixture.count("SELECT count(*) FROM notifications WHERE type = 'escalation'"), 6)
        XCTAssertEqual(try fixture.count("SELECT count(*) FROM audit_log WHERE action = 'escalation'"), 3)
        // Li, connected to both servers, gets each round once on each connection.
        for socket in [liOnA, liOnB] {
            var seen: [Int] = []
            while let frame = try socket.nextOrNil(timeout: 1.5) {
                if case .reminder(_, let round) = frame { seen.append(round) }
            }
            XCTAssertEqual(seen, [1, 2, 3])
        }
    }

    func testARestartInTheMiddleLosesAndRepeatsNoRound() throws {
        let first = try start(intervalSeconds: 3)
        let message = try sendEmergency(first)
        XCTAssertTrue(try waitUntil(10) { try rounds(message.id) == [1] })
        first.stop()
        XCTAssertEqual(try rounds(message.id), [1], "stopped before round 2")
        // Round 2 falls due while no server runs: letting its time pass is what is tested.
        sleep(4) // past round 2's time (3 s after round 1)
        XCTAssertEqual(try rounds(message.id), [1])
        let second = try start(intervalSeconds: 3)
        let li = try second.subscriber(liToken, fixture.event)
        XCTAssertTrue(try waitUntil(15) { try fixture.store.escalationState(message: message.id)?.finished == "max_rounds" })
        XCTAssertEqual(try rounds(message.id), [1, 2, 3])
        XCTAssertEqual(try fixture.count("SELECT count(*) FROM notifications WHERE type = 'escalation'"), 6)
    }

    func testARetractedMessageStopsEscalating() throws {
        let server = try start(intervalSeconds: 2)
        let message = try sendEmergency(server)
        XCTAssertTrue(try waitUntil(8) { try rounds(message.id) == [1] })
        _ = try fixture.store.retractMessage(as: fixture.owner, messageID: message.id)
        XCTAssertTrue(try waitUntil(6) { try fixture.store.escalationState(message: message.id)?.finished == "retracted" })
        XCTAssertEqual(try rounds(message.id), [1])
    }

    func testAnExpiredMessageStopsEscalating() throws {
        let server = try start(intervalSeconds: 1)
        let message = try sendEmergency(server)
        try fixture.store.conn.query("UPDATE staff_messages SET expires_at = now() WHERE id = $1", [id(message.id)])
        XCTAssertTrue(try waitUntil(6) { try fixture.store.escalationState(message: message.id)?.finished == "expired" })
        XCTAssertEqual(try rounds(message.id), [])
    }
}
