import Foundation
@testable import StaffcastPostgres
import StaffcastCore
import XCTest

/// `Store.sendRows` writes a send batch's rows straight into JSON bytes for
/// `jsonb_to_recordset` (the hot path: measured faster than typed arrays, docs/performance.md).
/// Its output must read back as the Codable reference rows, for every kind of value. No database.
final class SendRowsTests: XCTestCase {
    /// The columns `sendBatch` declares for `jsonb_to_recordset`, as a Codable reference.
    private struct Row: Codable, Equatable {
        var ord: Int
        var id: UUID
        var event_id: UUID
        var message: String?
        var message_type: String?
        var priority: String?
        var expires_in: Int?
        var force: Bool
        var escalate_after: Int?
        var template: String?
        var emergency_default: Int?
        var teams: [String]?
        var poll: [String]?
    }

    func testRowsReadBackAsTheReferenceRows() throws {
        let event = UUID()
        var plain = try SendRequest(eventID: event, message: "Gates open \"now\" \\ ünïcødé 🎪\n\ttab",
                                    messageType: "alert", priority: "urgent", expiresInMinutes: 15, escalateAfterMinutes: 5)
        plain.teams = ["Security", "Bar \"B\""]
        plain.force = true
        var poll = try SendRequest(eventID: event, message: "Lunch?")
        poll.poll = Poll(unchecked: ["Yes", "No", "Later ⏰"])
        var byTemplate = try SendRequest(eventID: event, message: "replaced by the template")
        byTemplate.template = TemplateUse(name: "gates", messageType: .emergency, priority: nil, expiresInMinutes: nil)
        byTemplate.template?.emergencyEscalationDefault = 10
        let sends = [plain, poll, byTemplate].map { Store.PendingSend(sender: UUID(), request: $0) }

        let written = Store.sendRows(sends)
        let rows = try JSONDecoder().decode([Row].self, from: Data(written.utf8))
        XCTAssertEqual(rows, [
            Row(ord: 0, id: sends[0].id, event_id: event, message: plain.message, message_type: "alert", priority: "urgent",
                expires_in: 15, force: true, escalate_after: 5, template: nil, emergency_default: nil,
                teams: ["Security", "Bar \"B\""], poll: nil),
            Row(ord: 1, id: sends[1].id, event_id: event, message: "Lunch?", message_type: "broadcast", priority: "normal",
                expires_in: nil, force: false, escalate_after: nil, template: nil, emergency_default: nil,
                teams: [], poll: ["Yes", "No", "Later ⏰"]),
            Row(ord: 2, id: sends[2].id, event_id: event, message: nil, message_type: "emergency", priority: nil,
                expires_in: nil, force: false, escalate_after: nil, template: "gates", emergency_default: 10,
                teams: nil, poll: nil), // null: the template's teams (`teams` absent; TemplateUse.ownTeams)
        ])
        // And the reference encoding of those rows reads back the same (the two agree both ways).
        XCTAssertEqual(try JSONDecoder().decode([Row].self, from: JSONEncoder().encode(rows)), rows)
    }
}
