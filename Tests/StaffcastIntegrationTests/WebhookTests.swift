import Foundation
import StaffcastClient
import StaffcastCore
import StaffcastPostgres
import StaffcastServer
import XCTest

/// Signed webhooks against a real receiver (`scripts/test-counterparts.py webhook`, which checks
/// each body's HMAC-SHA256): owners only, never the secret back, in order per webhook, retried
/// with backoff, and nothing lost when staffcast restarts in between.
final class WebhookTests: IntegrationTestCase {
    var receiver: Counterpart!
    let secret = "whsec-0123456789abcdef"

    override func setUpWithError() throws {
        try super.setUpWithError()
        receiver = try Counterpart(["webhook", "--secret", secret])
        try startServer()
    }

    override func tearDown() {
        receiver?.stop()
        receiver = nil
        super.tearDown()
    }

    func id(_ u: UUID) -> String { u.uuidString.lowercased() }
    var base: String { "http://127.0.0.1:\(receiver.port)" }

    func create(_ token: String, path: String, events: [String]) throws -> (status: Int, body: [String: Any]) {
        let body = try JSONSerialization.data(withJSONObject: ["url": base + path, "events": events, "secret": secret])
        let r = try server.api(token).raw("POST", "/v1/events/\(id(fixture.event))/webhooks", body: body, contentType: "application/json")
        return (r.status, (try? JSONSerialization.jsonObject(with: r.body) as? [String: Any]) ?? [:])
    }

    func data(_ request: [String: Any]) -> [String: Any] {
        (request["payload"] as? [String: Any])?["data"] as? [String: Any] ?? [:]
    }

    func testOnlyOwnersManageWebhooksAndTheSecretNeverComesBack() throws {
        XCTAssertEqual(try create(fixture.adminToken, path: "/ok", events: ["message"]).status, 403)
        XCTAssertEqual(try create(fixture.staffToken, path: "/ok", events: ["message"]).status, 403)
        XCTAssertEqual(try create(fixture.outsiderToken, path: "/ok", events: ["message"]).status, 404)
        XCTAssertEqual(try create(fixture.ownerToken, path: "/ok", events: ["sms"]).status, 400)
        XCTAssertEqual(try create(fixture.ownerToken, path: "/ok\r\nX-Evil: 1", events: ["message"]).status, 400, "a line break in the URL")
        let made = try create(fixture.ownerToken, path: "/ok", events: ["message", "receipt"])
        XCTAssertEqual(made.status, 201)
        XCTAssertNil(made.body["secret"])
        let hook = try XCTUnwrap(made.body["id"] as? String)
        let list = try server.api(fixture.ownerToken).raw("GET", "/v1/events/\(id(fixture.event))/webhooks")
        XCTAssertEqual(list.status, 200)
        XCTAssertFalse(String(decoding: list.body, as: UTF8.self).contains(secret), "the secret is never listed")
        XCTAssertTrue(String(decoding: list.body, as: UTF8.self).contains(hook))
        XCTAssertEqual(try server.api(fixture.adminToken).raw("GET", "/v1/events/\(id(fixture.event))/webhooks").status, 403)
        XCTAssertEqual(try server.api(fixture.ownerToken).raw("DELETE", "/v1/events/\(id(fixture.event))/webhooks/\(hook)").status, 200)
        XCTAssertEqual(try server.api(fixture.ownerToken).raw("DELETE", "/v1/events/\(id(fixture.event))/webhooks/\(hook)").status, 404)
    }

    /// A message's webhook says who it was for and what it asks (found from outside: a
    /// Security-only poll came with neither, so a receiver could forward it to everyone), with
    /// the Message object's names: `teams` ([] for the whole event) and `poll` (null when none).
    func testAMessageWebhookCarriesItsTeamsAndPoll() throws {
        XCTAssertEqual(try create(fixture.ownerToken, path: "/ok", events: ["message"]).status, 201)
        _ = try fixture.store.createTeam(as: fixture.owner, event: fixture.event, name: "Security", kind: .team)
        _ = try fixture.store.addTeamMember(as: fixture.owner, event: fixture.event, team: "Security", member: fixture.staff) // not empty
        let api = try server.api(fixture.ownerToken)
        let targeted = try JSONSerialization.data(withJSONObject: [
            "message": "Gate 3 clear?", "teams": ["Security"], "poll": ["options": ["Yes", "No"]]])
        XCTAssertEqual(try api.raw("POST", "/v1/events/\(id(fixture.event))/messages", body: targeted,
                                   contentType: "application/json").status, 201)
        _ = try api.sendMessage(event: fixture.event, message: "Doors at six", type: nil, priority: nil, expiresInMinutes: nil)

        let got = receiver.wait(for: 2) { ($0["path"] as? String) == "/ok" }
        guard got.count == 2 else { return XCTFail("\(got)") }
        XCTAssertTrue(got.allSatisfy { $0["signature_ok"] as? Bool == true }, "the signature covers the whole body")
        XCTAssertEqual(got.map { data($0)["message"] as? String }, ["Gate 3 clear?", "Doors at six"])
        XCTAssertEqual(data(got[0])["teams"] as? [String], ["Security"])
        XCTAssertEqual((data(got[0])["poll"] as? [String: Any])?["options"] as? [String], ["Yes", "No"])
        XCTAssertEqual(data(got[1])["teams"] as? [String], [])
        XCTAssertTrue(data(got[1])["poll"] is NSNull, "\(data(got[1]))")
    }

    func testDeliveriesAreSignedInOrderRetriedAndSurviveARestart() throws {
        XCTAssertEqual(try create(fixture.ownerToken, path: "/ok", events: ["message", "receipt", "reply"]).status, 201)
        let flaky = try create(fixture.ownerToken, path: "/fail2", events: ["message"])
        let flakyID = try XCTUnwrap(flaky.body["id"] as? String)
        let api = try server.api(fixture.ownerToken)
        let messages = try (1...3).map {
            try api.sendMessage(event: fixture.event, message: "Update \($0)", type: nil, priority: nil, expiresInMinutes: nil)
        }
        let staff = try server.subscriber(fixture.staffToken, fixture.event)
        try staff.send(["op": "mark_read", "message_id": id(messages[0].id)])
        _ = try staff.expect("read")
        try staff.send(["op": "reply", "message_id": id(messages[0].id), "status": "on_my_way"])
        _ = try staff.expect("replied")
        staff.close()

        // The good receiver: every change, signed, in order.
        let ok = receiver.wait(for: 5) { ($0["path"] as? String) == "/ok" }
        XCTAssertTrue(ok.allSatisfy { $0["signature_ok"] as? Bool == true }, "\(ok)")
        XCTAssertEqual(ok.map { ($0["payload"] as? [String: Any])?["type"] as? String }, ["message", "message", "message", "receipt", "reply"])
        XCTAssertEqual(ok.prefix(3).map { data($0)["id"] as? String }, messages.map { id($0.id) })
        XCTAssertEqual(ok.prefix(3).map { data($0)["message"] as? String }, ["Update 1", "Update 2", "Update 3"])
        XCTAssertEqual((ok[3]["payload"] as? [String: Any])?["event_id"] as? String, id(fixture.event))
        XCTAssertEqual(data(ok[3])["user_id"] as? String, id(fixture.staff))
        XCTAssertEqual(data(ok[4])["status"] as? String, "on_my_way")
        XCTAssertEqual(Set(ok.compactMap { $0["delivery"] as? String }).count, 5, "each delivery has its own id")

        // The flaky receiver fails each delivery twice. Stop staffcast after the first failure:
        // what is owed stays in PostgreSQL, and a new server delivers it.
        receiver.wait { ($0["path"] as? String) == "/fail2" }
        server.stop()
        XCTAssertGreaterThan(try fixture.count("SELECT count(*) FROM outbox WHERE kind = 'webhook' AND status = 'pending'"), 0)
        server = try TestServer(conninfo: fixture.conninfo)
        let flakyRequests = receiver.wait(for: 9, timeout: 90) { ($0["path"] as? String) == "/fail2" }
        XCTAssertTrue(flakyRequests.allSatisfy { $0["signature_ok"] as? Bool == true })
        // In order: each message's three attempts (500, 500, then taken) before the next one's first.
        XCTAssertEqual(flakyRequests.map { data($0)["id"] as? String },
                       messages.flatMap { m in Array(repeating: id(m.id), count: 3) })
        XCTAssertEqual(flakyRequests.map { $0["answered"] as? Int }, [500, 500, 200, 500, 500, 200, 500, 500, 200].map { $0 == 200 ? 204 : $0 })
        XCTAssertEqual(Set(flakyRequests.prefix(3).compactMap { $0["delivery"] as? String }).count, 1, "a retry keeps its delivery id")

        // The owner sees the attempts, newest first.
        let r = try server.api(fixture.ownerToken).raw("GET", "/v1/events/\(id(fixture.event))/webhooks/\(flakyID)/deliveries")
        XCTAssertEqual(r.status, 200)
        let attempts = (try JSONSerialization.jsonObject(with: r.body) as? [String: Any])?["deliveries"] as? [[String: Any]] ?? []
        XCTAssertTrue(try waitUntil(10) {
            let again = try server.api(fixture.ownerToken).raw("GET", "/v1/events/\(id(fixture.event))/webhooks/\(flakyID)/deliveries")
            let list = (try JSONSerialization.jsonObject(with: again.body) as? [String: Any])?["deliveries"] as? [[String: Any]] ?? []
            return list.count == 9 && list.first?["outcome"] as? String == "delivered" && list.last?["status_code"] as? Int == 500
        }, "\(attempts)")
    }

    /// A receiver answering 302 fails that delivery at once (redirects are not followed), with
    /// the Location in the stored reason, and the webhook's next delivery goes right after it
    /// instead of waiting a day behind retries.
    func testARedirectFailsTheDeliveryAtOnceAndSaysWhere() throws {
        let moved = try create(fixture.ownerToken, path: "/moved", events: ["message"])
        let hook = try XCTUnwrap(moved.body["id"] as? String)
        let api = try server.api(fixture.ownerToken)
        for n in 1...2 {
            _ = try api.sendMessage(event: fixture.event, message: "Update \(n)", type: nil, priority: nil, expiresInMinutes: nil)
        }
        let requests = receiver.wait(for: 2, timeout: 15) { ($0["path"] as? String) == "/moved" }
        XCTAssertEqual(requests.map { data($0)["message"] as? String }, ["Update 1", "Update 2"], "one attempt each, in order")
        XCTAssertTrue(try waitUntil(10) {
            try fixture.count("SELECT count(*) FROM outbox WHERE kind = 'webhook' AND status = 'failed' AND last_error LIKE $1",
                              ["%302%Location: https://hooks.example.org/new-home%"]) == 2
        })
        let r = try api.raw("GET", "/v1/events/\(id(fixture.event))/webhooks/\(hook)/deliveries")
        let list = (try JSONSerialization.jsonObject(with: r.body) as? [String: Any])?["deliveries"] as? [[String: Any]] ?? []
        XCTAssertEqual(list.count, 2, "\(list)")
        XCTAssertTrue(list.allSatisfy { $0["outcome"] as? String == "failed" && $0["status_code"] as? Int == 302 }, "\(list)")
        XCTAssertTrue(list.allSatisfy { ($0["error"] as? String)?.contains("Location: https://hooks.example.org/new-home") == true },
                      "\(list)")
        Thread.sleep(forTimeInterval: 2)
        XCTAssertEqual(receiver.requests.filter { ($0["path"] as? String) == "/moved" }.count, 2, "no retries")
    }

    /// A webhook for "message" also gets the corrections (sql/021), after the message, in
    /// order and signed: `message_updated` with the Message as it now reads, then
    /// `message_retracted` with its id. A webhook for other kinds gets none of them.
    func testAnEditAndARetractFollowTheMessageDelivery() throws {
        XCTAssertEqual(try create(fixture.ownerToken, path: "/ok", events: ["message"]).status, 201)
        XCTAssertEqual(try create(fixture.ownerToken, path: "/receipts", events: ["receipt"]).status, 201)
        let api = try server.api(fixture.ownerToken)
        let m = try api.sendMessage(event: fixture.event, message: "Evacuate hall B", type: nil, priority: nil, expiresInMinutes: nil)
        _ = try api.editMessage(m.id, text: "Evacuate hall C")
        try api.retractMessage(m.id)

        let got = receiver.wait(for: 3) { ($0["path"] as? String) == "/ok" }
        guard got.count == 3 else { return XCTFail("\(got)") }
        XCTAssertTrue(got.allSatisfy { $0["signature_ok"] as? Bool == true }, "\(got)")
        XCTAssertEqual(got.map { ($0["payload"] as? [String: Any])?["type"] as? String }, ["message", "message_updated", "message_retracted"])
        XCTAssertEqual(got.map { ($0["payload"] as? [String: Any])?["event_id"] as? String }, Array(repeating: id(fixture.event), count: 3))
        XCTAssertEqual(data(got[1])["id"] as? String, id(m.id))
        XCTAssertEqual(data(got[1])["message"] as? String, "Evacuate hall C")
        XCTAssertEqual(data(got[1])["sender_name"] as? String, "Olivia Owner")
        XCTAssertNotNil(data(got[1])["edited_at"] as? String, "\(data(got[1]))")
        XCTAssertEqual(data(got[2])["message_id"] as? String, id(m.id))
        XCTAssertNotNil(data(got[2])["retracted_at"] as? String, "\(data(got[2]))")
        XCTAssertEqual(Set(got.compactMap { $0["delivery"] as? String }).count, 3, "each delivery has its own id")
        Thread.sleep(forTimeInterval: 1)
        XCTAssertTrue(receiver.requests.filter { ($0["path"] as? String) == "/receipts" }.isEmpty)
    }
}
