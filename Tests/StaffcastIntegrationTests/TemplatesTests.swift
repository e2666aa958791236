import Foundation
import StaffcastClient
import StaffcastCore
import StaffcastPostgres
import XCTest

/// Templates per event (docs/protocol.md): HTTP create/list/delete with access rules, sends by
/// template over the WebSocket and HTTP (inside the group commit, a bad one failing alone),
/// the duplicate guard on a template's text, the CLI, and RLS in SQL.
final class TemplatesTests: IntegrationTestCase {
    override class var startsServer: Bool { true }

    var base: String { "/v1/events/\(fixture.event.uuidString.lowercased())" }

    func create(_ token: String, _ body: [String: Any]) throws -> APIClient.Response {
        try server.api(token).raw("POST", base + "/templates", body: try JSONSerialization.data(withJSONObject: body),
                                  contentType: "application/json")
    }

    func testCreateListDeleteAndAccess() throws {
        var r = try create(fixture.adminToken, ["name": "gates-open", "message": "Gates are open", "priority": "high",
                                                "expires_in_minutes": 60])
        XCTAssertEqual(r.status, 201, String(decoding: r.body, as: UTF8.self))
        let t = try JSONDecoder().decode(MessageTemplate.self, from: r.body)
        XCTAssertEqual(t.priority, .high)
        XCTAssertEqual(t.expiresInMinutes, 60)
        r = try create(fixture.ownerToken, ["name": "gates-open", "message": "again"])
        XCTAssertEqual(r.status, 409)
        XCTAssertEqual(try create(fixture.ownerToken, ["name": "bad/name", "message": "x"]).status, 400)
        XCTAssertEqual(try create(fixture.ownerToken, ["name": "x", "message": ""]).status, 400)
        XCTAssertEqual(try create(fixture.staffToken, ["name": "mine", "message": "x"]).status, 403)
        XCTAssertEqual(try create(fixture.outsiderToken, ["name": "mine", "message": "x"]).status, 404)
        XCTAssertEqual(try server.api(fixture.ownerToken).templates(event: fixture.event).map(\.name), ["gates-open"])
        XCTAssertEqual(try server.api(fixture.staffToken).raw("GET", base + "/templates").status, 403)
        XCTAssertEqual(try server.api(fixture.outsiderToken).raw("GET", base + "/templates").status, 404)
        XCTAssertEqual(try server.api(fixture.staffToken).raw("DELETE", base + "/templates/gates-open").status, 403)
        XCTAssertEqual(try create(fixture.ownerToken, ["name": "Lunch time", "message": "Lunch is served"]).status, 201)
        try server.api(fixture.ownerToken).deleteTemplate(event: fixture.event, name: "Lunch time")
        XCTAssertEqual(try server.api(fixture.ownerToken).raw("DELETE", base + "/templates/nothing").status, 404)
        XCTAssertEqual(try server.api(fixture.ownerToken).templates(event: fixture.event).map(\.name), ["gates-open"])
    }

    func testSendByTemplateOverWebSocketAndHTTPWithOverridesAndTheGuard() throws {
        XCTAssertEqual(try create(fixture.ownerToken, ["name": "gates-open", "message": "Gates are open", "priority": "high",
                                                       "message_type": "alert"]).status, 201)
        let staff = try server.subscriber(fixture.staffToken, fixture.event)
        let owner = try server.connect(fixture.ownerToken)
        try owner.send(["op": "send", "ref": "t1", "event_id": fixture.event.uuidString, "template": "gates-open"])
        guard case .sent(_, let sent) = try owner.expect("sent") else { return XCTFail() }
        XCTAssertEqual(sent.message, "Gates are open")
        XCTAssertEqual(sent.priority, .high)
        XCTAssertEqual(sent.messageType, .alert)
        XCTAssertEqual(try staff.expect("message").message?.message, "Gates are open")
        // The same template again within the window is the same text: refused unless forced.
        XCTAssertEqual(try owner.expectError(["op": "send", "event_id": fixture.event.uuidString, "template": "gates-open"]).code,
                       .conflict)
        let r = try server.api(fixture.adminToken).raw("POST", base + "/messages",
            body: try JSONSerialization.data(withJSONObject: ["template": "gates-open", "priority": "urgent", "force": true]),
            contentType: "application/json")
        XCTAssertEqual(r.status, 201, String(decoding: r.body, as: UTF8.self))
        let overridden = try JSONDecoder().decode(StaffMessage.self, from: r.body)
        XCTAssertEqual(overridden.priority, .urgent, "the send's own priority overrides the template's")
        XCTAssertEqual(overridden.messageType, .alert)
        // Unknown template, and template with message: clear errors, nothing stored.
        XCTAssertEqual(try owner.expectError(["op": "send", "event_id": fixture.event.uuidString, "template": "nope"]).code, .notFound)
        XCTAssertEqual(try owner.expectError(["op": "send", "event_id": fixture.event.uuidString, "template": "gates-open",
                                              "message": "x"]).code, .invalid)
        // Staff may not send a template either.
        XCTAssertEqual(try staff.expectError(["op": "send", "event_id": fixture.event.uuidString, "template": "gates-open",
                                              "force": true]).code, .forbidden)
        XCTAssertEqual(fixture.messageCount, 2)
    }

    /// Sends that arrive together are one group commit: one naming a missing template fails
    /// alone with not_found, the others of its batch are stored.
    func testAMissingTemplateInABatchFailsAlone() throws {
        XCTAssertEqual(try create(fixture.ownerToken, ["name": "lunch", "message": "Lunch is served"]).status, 201)
        let owner = try server.connect(fixture.ownerToken)
        let event = fixture.event.uuidString
        let frames: [[String: Any]] = [
            ["op": "send", "ref": "a", "event_id": event, "message": "one"],
            ["op": "send", "ref": "b", "event_id": event, "template": "missing"],
            ["op": "send", "ref": "c", "event_id": event, "template": "lunch"],
            ["op": "send", "ref": "d", "event_id": event, "message": "two"],
        ]
        let (sent, refused) = try owner.sendBatch(frames)
        XCTAssertEqual(sent, ["a", "c", "d"])
        XCTAssertEqual(refused, ["b": .notFound])
        XCTAssertEqual(try fixture.count("SELECT count(*) FROM staff_messages WHERE message = 'Lunch is served'"), 1)
    }

    func testCommandLine() throws {
        let id = fixture.event.uuidString.lowercased()
        func run(_ args: [String], token: String? = nil) throws -> CommandLineTests.Outcome {
            try CommandLineTests.execute(args, env: ["STAFFCAST_SERVER": server.http, "STAFFCAST_TOKEN": token ?? fixture.ownerToken,
                                                     "HOME": NSTemporaryDirectory()])
        }
        let made = try run(["template", "create", "--event", id, "--name", "gates-open", "--priority", "high", "Gates are open"])
        XCTAssertEqual(made.status, 0, made.stderr)
        let list = try run(["template", "list", "--event", id])
        XCTAssertTrue(list.stdout.contains("gates-open") && list.stdout.contains("Gates are open"), list.stdout)
        let sent = try run(["send", "--event", id, "--template", "gates-open"])
        XCTAssertEqual(sent.status, 0, sent.stderr)
        XCTAssertEqual(try run(["send", "--event", id, "--template", "gates-open"]).status, 1, "the guard")
        XCTAssertEqual(try run(["send", "--event", id, "--template", "gates-open", "--force"]).status, 0)
        XCTAssertEqual(try run(["template", "create", "--event", id, "--name", "x", "y"], token: fixture.staffToken).status, 2)
        XCTAssertEqual(try run(["template", "delete", "--event", id, "gates-open"]).status, 0)
        XCTAssertEqual(try run(["send", "--event", id, "--template", "gates-open", "--force"]).status, 2, "no such template")
        XCTAssertEqual(fixture.messageCount, 2)
    }

    func testRowLevelSecurityOfTemplates() throws {
        let conn = try PGConnection(conninfo: fixture.conninfo)
        func insert(_ user: UUID, createdBy: UUID? = nil, name: String) throws {
            _ = try conn.transaction(asUser: user) {
                try $0.query("""
                    INSERT INTO message_templates (event_id, name, message, message_type, priority, created_by)
                    VALUES ($1, $2, 'x', 'broadcast', 'normal', $3)
                    """, [fixture.event.uuidString, name, (createdBy ?? user).uuidString])
            }
        }
        func refused(_ body: () throws -> Void) {
            XCTAssertThrowsError(try body()) { XCTAssertEqual(($0 as? PostgresError)?.sqlState, "42501", "\($0)") }
        }
        try insert(fixture.admin, name: "a")
        refused { try insert(fixture.staff, name: "s") }
        refused { try insert(fixture.outsider, name: "o") }
        refused { try insert(fixture.admin, createdBy: fixture.owner, name: "forged") }
        func visible(_ user: UUID) throws -> Int {
            try conn.transaction(asUser: user) { try $0.query("SELECT count(*) FROM message_templates").int(0, 0) ?? -1 }
        }
        XCTAssertEqual(try visible(fixture.owner), 1)
        XCTAssertEqual(try visible(fixture.staff), 0)
        XCTAssertEqual(try visible(fixture.outsider), 0)
        let deleted = try conn.transaction(asUser: fixture.staff) { try $0.query("DELETE FROM message_templates").affectedRows }
        XCTAssertEqual(deleted, 0)
    }
}
