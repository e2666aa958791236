import Foundation
import StaffcastClient
import StaffcastCore
import StaffcastPostgres
import XCTest

/// Polls and reports (docs/protocol.md, Polls and Reports) with real sockets and PostgreSQL:
/// answers over WebSocket and HTTP, re-answers, live tallies, the unanswered list, "I need
/// help" notifications, and CSV reports read back with Python's csv module.
final class PollTests: IntegrationTestCase {
    override class var startsServer: Bool { true }
    /// A name a spreadsheet would take for a formula: the CSV reports must not let it run.
    override class var secondStaffName: String? { "=cmd()" }
    var li: UUID { secondStaff.id }
    var liToken: String { secondStaff.token }

    func send(_ body: [String: Any]) throws -> APIClient.Response {
        try server.api(fixture.ownerToken).raw("POST", "/v1/events/\(fixture.event.uuidString.lowercased())/messages",
                                               body: try JSONSerialization.data(withJSONObject: body), contentType: "application/json")
    }

    func testAnswersReanswersTalliesAndTheUnansweredListAgree() throws {
        let admin = try server.subscriber(fixture.adminToken, fixture.event)
        let sam = try server.subscriber(fixture.staffToken, fixture.event)
        let r = try send(["message": "Is there water at your gate?", "poll": ["options": ["Yes", "No", "Running low"]]])
        XCTAssertEqual(r.status, 201, String(decoding: r.body, as: UTF8.self))
        let poll = try JSONDecoder().decode(StaffMessage.self, from: r.body)
        XCTAssertEqual(poll.poll?.options, ["Yes", "No", "Running low"])
        XCTAssertNil(poll.answer)
        guard case .message(let live) = try sam.expect("message") else { return XCTFail() }
        XCTAssertEqual(live.poll?.options.count, 3)
        _ = try admin.expect("message")

        // Sam answers over the WebSocket: answered, a tally to the admin, and it is read.
        try sam.send(["op": "answer", "ref": "a1", "message_id": poll.id.uuidString, "option": 2])
        guard case .answered(let ref, let id, let option) = try sam.expect("answered") else { return XCTFail() }
        XCTAssertEqual(ref, "a1")
        XCTAssertEqual(id, poll.id)
        XCTAssertEqual(option, 2)
        var tally = try nextTally(admin)
        XCTAssertEqual(tally.counts, [0, 0, 1])
        XCTAssertEqual(tally.answered, 1)
        XCTAssertEqual(tally.audience, 3, "admin, Sam and Li (not the owner who asked)")
        // Re-answer changes it.
        try sam.send(["op": "answer", "ref": "a2", "message_id": poll.id.uuidString, "option": 0])
        _ = try sam.expect("answered")
        tally = try nextTally(admin)
        XCTAssertEqual(tally.counts, [1, 0, 0])
        XCTAssertEqual(tally.answered, 1)
        // Li over HTTP.
        let answered = try server.api(liToken).raw("POST", "/v1/messages/\(poll.id.uuidString.lowercased())/answers",
                                                   body: Data(#"{"option":1}"#.utf8), contentType: "application/json")
        XCTAssertEqual(answered.status, 201, String(decoding: answered.body, as: UTF8.self))
        tally = try nextTally(admin)
        XCTAssertEqual(tally.counts, [1, 1, 0])

        // Bad answers: clear errors, nothing stored.
        XCTAssertEqual(try sam.expectError(["op": "answer", "message_id": poll.id.uuidString, "option": 3]).code, .invalid)
        XCTAssertEqual(try sam.expectError(["op": "answer", "message_id": poll.id.uuidString, "option": 9]).code, .invalid)
        XCTAssertEqual(try sam.expectError(["op": "answer", "message_id": UUID().uuidString, "option": 0]).code, .notFound)
        let plain = try JSONDecoder().decode(StaffMessage.self, from: try send(["message": "No question here"]).body)
        XCTAssertEqual(try sam.expectError(["op": "answer", "message_id": plain.id.uuidString, "option": 0]).code, .invalid)
        let outsider = try server.api(fixture.outsiderToken).raw("POST", "/v1/messages/\(poll.id.uuidString.lowercased())/answers",
                                                                body: Data(#"{"option":0}"#.utf8), contentType: "application/json")
        XCTAssertEqual(outsider.status, 404)

        // The report agrees with the tallies; answering marked it read.
        let report = try server.api(fixture.ownerToken).answers(message: poll.id).report
        XCTAssertEqual(report.counts, [1, 1, 0])
        XCTAssertEqual(Set(report.answers.map(\.userID)), [fixture.staff, li])
        XCTAssertEqual(report.answers.first { $0.userID == fixture.staff }?.option, 0)
        XCTAssertEqual(report.unanswered.map(\.userID), [fixture.admin])
        XCTAssertEqual(report.counts.reduce(0, +) + report.unanswered.count, tally.audience)
        let receipts = try server.api(fixture.ownerToken).receipts(message: poll.id).list
        XCTAssertEqual(Set(receipts.readBy.map(\.userID)), [fixture.staff, li])
        XCTAssertEqual(try server.api(fixture.staffToken).raw("GET", "/v1/messages/\(poll.id.uuidString.lowercased())/answers").status, 403)
        // Each person sees their own answer on the message.
        let history = try server.api(fixture.staffToken).searchMessages(event: fixture.event, query: ["since_seq": "0"]).messages
        XCTAssertEqual(history.first { $0.id == poll.id }?.answer, 0)
    }

    /// A help alert quotes the event's message and names the person: once the organiser's access
    /// to the event ends, it is no longer listed to them (the attack round read it after a revoke).
    func testAHelpAlertIsNoLongerListedOnceAccessEnds() throws {
        let r = try send(["message": "Are you safe at gate 9?", "poll": ["options": "safe"], "priority": "urgent"])
        let check = try JSONDecoder().decode(StaffMessage.self, from: r.body)
        try server.api(liToken).answer(message: check.id, option: 1)
        func listed() throws -> String {
            String(decoding: try server.api(fixture.adminToken).call("GET", "/v1/me/notifications"), as: UTF8.self)
        }
        XCTAssertTrue(try waitUntil(5) { try listed().contains("gate 9") }, "no help alert listed")
        // One whose data names no message the reader can be checked against is listed as before.
        _ = try fixture.store.createNotification(as: fixture.owner, try NotificationRequest(
            userID: fixture.admin, type: "note", title: "Shift change", message: "See you at 6", data: .object(["message_id": .string("x")])))
        _ = try fixture.store.revoke(event: fixture.event, user: fixture.admin)
        let after = try listed()
        XCTAssertFalse(after.contains("gate 9"), after)
        XCTAssertTrue(after.contains("Shift change"), after)
    }

    /// Two answers of one person in one group commit: the later one counts, as its `answered`
    /// said. The attack round found "I am safe" then "I need help", sent back to back by 30
    /// people, stored as 30 safe and no help notification: the batch kept whichever answer the
    /// access query returned last, in no set order.
    func testTheLaterOfTwoAnswersInOneBatchCounts() throws {
        let r = try send(["message": "Are you safe?", "poll": ["options": "safe"], "priority": "urgent"])
        let check = try JSONDecoder().decode(StaffMessage.self, from: r.body)
        var batch: [Store.PendingAnswer] = []
        var expected: [UUID: Int] = [:]
        for i in 0..<30 {
            let person = try fixture.person("Steward \(i)").id
            // Half change their mind to "I need help", half the other way round.
            let (first, then) = i % 2 == 0 ? (0, 1) : (1, 0)
            batch.append(Store.PendingAnswer(user: person, message: check.id, option: first))
            batch.append(Store.PendingAnswer(user: person, message: check.id, option: then))
            expected[person] = then
        }
        // A hash join (what the planner picks once event_access is large) returns the rows of
        // one bucket latest first; force it here, where the tables are small.
        try fixture.store.conn.execute("SET enable_nestloop = off; SET enable_mergejoin = off")
        defer { _ = try? fixture.store.conn.execute("RESET enable_nestloop; RESET enable_mergejoin") }
        let outcomes = try fixture.store.answerBatch(batch)
        XCTAssertEqual(outcomes.filter { (try? $0.get()) == fixture.event }.count, 60, "every answer is answered")
        let stored = try fixture.store.conn.query("SELECT user_id, option FROM poll_answers WHERE message_id = $1",
                                                  [check.id.uuidString.lowercased()])
        var got: [UUID: Int] = [:]
        for row in 0..<stored.rowCount { if let u = stored.uuid(row, 0) { got[u] = stored.int(row, 1) } }
        XCTAssertEqual(got, expected, "each person's later answer is stored")
        XCTAssertEqual(try fixture.count("SELECT count(*) FROM notifications WHERE type = 'help' AND data->>'message_id' = $1",
                                         [check.id.uuidString.lowercased()]), 15 * 2, "15 need help, told to the admin and the owner")
    }

    /// An expired poll is closed: a late answer changed counts an organiser may already have
    /// reported (attack round 3).
    func testAnExpiredPollTakesNoMoreAnswers() throws {
        let r = try send(["message": "Shuttle at 18:00?", "poll": ["options": ["Yes", "No"]], "expires_in_minutes": 5])
        let poll = try JSONDecoder().decode(StaffMessage.self, from: r.body)
        try fixture.store.conn.execute("UPDATE staff_messages SET expires_at = now() - interval '1 minute' WHERE id = '\(poll.id.uuidString)'")
        let late = try server.api(liToken).raw("POST", "/v1/messages/\(poll.id.uuidString.lowercased())/answers",
                                               body: Data(#"{"option":1}"#.utf8), contentType: "application/json")
        XCTAssertEqual(late.status, 400, String(decoding: late.body, as: UTF8.self))
        XCTAssertTrue(String(decoding: late.body, as: UTF8.self).contains("expired"))
        let sam = try server.connect(fixture.staffToken)
        XCTAssertEqual(try sam.expectError(["op": "answer", "message_id": poll.id.uuidString, "option": 0]).code, .invalid)
        XCTAssertEqual(try fixture.store.conn.query("SELECT count(*) FROM poll_answers WHERE message_id = '\(poll.id.uuidString)'").int(0, 0), 0)
    }

    func testINeedHelpNotifiesAdminsAndOwnersAtOnce() throws {
        let admin = try server.connect(fixture.adminToken)
        let owner = try server.connect(fixture.ownerToken)
        let r = try send(["message": "Are you safe?", "poll": ["options": "safe"], "priority": "urgent"])
        let check = try JSONDecoder().decode(StaffMessage.self, from: r.body)
        XCTAssertEqual(check.poll?.options, ["I am safe", "I need help"])
        let sam = try server.connect(fixture.staffToken)
        try sam.send(["op": "answer", "ref": "h", "message_id": check.id.uuidString, "option": 0])
        _ = try sam.expect("answered")
        try admin.expectSilence(0.3)
        try server.api(liToken).answer(message: check.id, option: 1)
        for socket in [admin, owner] {
            guard case .notification(let n) = try socket.expect("notification") else { return XCTFail() }
            XCTAssertEqual(n.type, "help")
            guard case .object(let data)? = n.data else { return XCTFail("data: \(String(describing: n.data))") }
            XCTAssertEqual(data["message_id"], .string(check.id.uuidString.lowercased()))
            XCTAssertEqual(data["user_id"], .string(li.uuidString.lowercased()))
            XCTAssertEqual(data["display_name"], .string("=cmd()"))
        }
        XCTAssertEqual(try fixture.count("SELECT count(*) FROM notifications WHERE type = 'help'"), 2)
        XCTAssertEqual(try send(["message": "Bad", "poll": ["options": ["only one"]]]).status, 400)
        XCTAssertEqual(try send(["message": "Bad", "poll": ["options": "unsafe"]]).status, 400)
    }

    func testReportsAsCSVParseWithPythonAndNeutraliseFormulas() throws {
        // Staff on a screen for the event, seen by presence (refreshed every 3 s): reached live.
        let watching = try server.subscriber(fixture.staffToken, fixture.event)
        XCTAssertTrue(try waitUntil(15) { try self.fixture.count("SELECT count(*) FROM presence WHERE user_id = '\(self.fixture.staff)'") > 0 })
        let r = try send(["message": "Shift ok?", "poll": ["options": ["Yes", "=2+2"]]])
        _ = try watching.expect("message", timeout: 10)
        let poll = try JSONDecoder().decode(StaffMessage.self, from: r.body)
        try server.api(liToken).answer(message: poll.id, option: 1)
        let api = try server.api(fixture.ownerToken)
        let id = poll.id.uuidString.lowercased()
        // Li replies with a formula too.
        let li = try server.connect(liToken)
        try li.send(["op": "reply", "ref": "r", "message_id": id, "status": "custom", "text": "@SUM(A1) , \"quoted\""])
        _ = try li.expect("replied")

        func rows(_ data: Data) throws -> [[String]] {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            p.arguments = ["python3", "-c", "import csv,io,json,sys; print(json.dumps(list(csv.reader(io.StringIO(sys.stdin.buffer.read().decode('utf-8-sig'), newline='')))))"]
            let input = Pipe(), output = Pipe()
            p.standardInput = input
            p.standardOutput = output
            try p.run()
            input.fileHandleForWriting.write(data)
            try input.fileHandleForWriting.close()
            let out = output.fileHandleForReading.readDataToEndOfFile()
            p.waitUntilExit()
            XCTAssertEqual(p.terminationStatus, 0)
            return try JSONDecoder().decode([[String]].self, from: out)
        }
        let answersBytes = try api.csv("/v1/messages/\(id)/answers")
        XCTAssertEqual(Array(answersBytes.prefix(3)), [0xEF, 0xBB, 0xBF], "a byte order mark, so that Excel reads UTF-8")
        let answers = try rows(answersBytes)
        XCTAssertEqual(answers.first, ["user_id", "display_name", "option", "option_text", "answered_at"])
        let liRow = try XCTUnwrap(answers.first { $0.first == self.li.uuidString.lowercased() })
        XCTAssertEqual(liRow[1], "'=cmd()", "a formula name is neutralised")
        XCTAssertEqual(liRow[3], "'=2+2")
        XCTAssertEqual(answers.count, 1 + 3, "header, Li, and the two who have not answered")

        XCTAssertTrue(try waitUntil(15) {
            String(decoding: try api.raw("GET", "/v1/messages/\(id)/receipts").body, as: UTF8.self).contains(#""via":"live""#)
        }, "the funnel records the live reach")
        let receipts = try rows(try api.csv("/v1/messages/\(id)/receipts"))
        XCTAssertEqual(receipts.first, ["user_id", "display_name", "read", "read_at", "reply_status", "reply_text",
                                        "reached_live_at", "reached_push_at", "reached_email_at"])
        XCTAssertEqual(receipts.first { $0.first == self.li.uuidString.lowercased() }?[2], "true")
        // The funnel columns say what the JSON says: who was reached, by which way.
        let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: try api.raw("GET", "/v1/messages/\(id)/receipts").body) as? [String: Any])
        let people = ((json["read_by"] as? [[String: Any]]) ?? []) + ((json["unread_by"] as? [[String: Any]]) ?? [])
        for (column, way) in [(6, "live"), (7, "push"), (8, "email")] {
            let inJSON = Set(people.filter { (($0["reached"] as? [[String: Any]]) ?? []).contains { $0["via"] as? String == way } }
                .compactMap { $0["user_id"] as? String })
            let inCSV = Set(receipts.dropFirst().filter { !$0[column].isEmpty }.map { $0[0] })
            XCTAssertEqual(inCSV, inJSON, way)
            if way == "live" { XCTAssertFalse(inCSV.isEmpty, "someone was reached live") }
        }
        XCTAssertEqual(receipts.first { $0.first == self.li.uuidString.lowercased() }?[5], "'@SUM(A1) , \"quoted\"")

        // Accept: text/csv works too.
        let replies = try api.raw("GET", "/v1/messages/\(id)/replies", query: [:])
        XCTAssertTrue(String(decoding: replies.body, as: UTF8.self).hasPrefix("{"), "JSON unless asked")
        let repliesCSV = try rows(try api.csv("/v1/messages/\(id)/replies"))
        XCTAssertEqual(repliesCSV.count, 2)
        XCTAssertEqual(repliesCSV[1][2], "custom")

        let audit = try rows(try api.csv("/v1/events/\(fixture.event.uuidString.lowercased())/audit"))
        XCTAssertEqual(audit.first, ["at", "actor", "action", "event_id", "user_id", "detail"])
        XCTAssertTrue(audit.contains { $0[2] == "message_send" })
        // A cut log says so: `more` when older entries were left out.
        let auditPath = "/v1/events/\(fixture.event.uuidString.lowercased())/audit"
        for (limit, more) in [("1", true), ("100000", false)] {
            let page = try api.raw("GET", auditPath, query: ["limit": limit])
            let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: page.body) as? [String: Any])
            XCTAssertEqual(object["more"] as? Bool, more, "limit \(limit)")
            if limit == "1" { XCTAssertEqual((object["entries"] as? [Any])?.count, 1) }
        }
        XCTAssertEqual(try server.api(fixture.staffToken).raw("GET", "/v1/events/\(fixture.event.uuidString.lowercased())/audit").status, 403)

        // The command line's --csv.
        let env = ["STAFFCAST_SERVER": server.http, "STAFFCAST_TOKEN": fixture.ownerToken, "HOME": NSTemporaryDirectory()]
        for args in [["answers", id, "--csv"], ["receipts", id, "--csv"], ["replies", id, "--csv"]] {
            let out = try CommandLineTests.execute(args, env: env)
            XCTAssertEqual(out.status, 0, out.stderr)
            XCTAssertTrue(try rows(Data(out.stdout.utf8)).contains { $0.contains("'=cmd()") }, "\(args): \(out.stdout)")
        }
        let text = try CommandLineTests.execute(["answers", id], env: env)
        XCTAssertTrue(text.stdout.contains("answered by 1 of 3"), text.stdout)
    }

    func nextTally(_ socket: TestSocket, file: StaticString = #filePath, line: UInt = #line) throws -> PollTally {
        guard case .pollTally(let t) = try socket.expect("poll_tally", file: file, line: line) else { throw ClientError.timeout }
        return t
    }
}
