import Foundation
import StaffcastClient
import StaffcastCore
import StaffcastPostgres
import StaffcastServer
import XCTest

/// Subscribes that arrive together are answered in batches (`Store.subscribeBatch`); each
/// subscriber must still get exactly its own answer: its history, its read flags, its unread
/// count, its since_seq catch-up, and a refusal when it has no access.
final class SubscribeStormTests: IntegrationTestCase {
    override func setUpWithError() throws {
        try super.setUpWithError()
        try startServer() { $0.maxConnectionsPerUser = 1_000 }
    }

    func testManySubscribesAtOnceEachGetTheirOwnAnswer() throws {
        var sent: [StaffMessage] = []
        for i in 0..<60 {
            sent.append(try fixture.store.send(as: fixture.owner, SendRequest(eventID: fixture.event, message: "m\(i)")))
        }
        // The staff member has read two of the newest; the admin none.
        _ = try fixture.store.markRead(as: fixture.staff, message: sent[58].id)
        _ = try fixture.store.markRead(as: fixture.staff, message: sent[59].id)

        let staff = try (0..<40).map { _ in try server.connect(fixture.staffToken) }
        let admins = try (0..<10).map { _ in try server.connect(fixture.adminToken) }
        let outsiders = try (0..<5).map { _ in try server.connect(fixture.outsiderToken) }
        let event = fixture.event.uuidString.lowercased()
        // Everything written before anything is read, so the server sees them together.
        for (i, s) in staff.enumerated() {
            var op: [String: Any] = ["op": "subscribe", "event_id": event, "ref": "s\(i)"]
            if i % 4 == 0 { op["since_seq"] = sent[49].seq } // catch-up: the last ten
            try s.send(op)
        }
        for (i, s) in admins.enumerated() { try s.send(["op": "subscribe", "event_id": event, "ref": "a\(i)"]) }
        for (i, s) in outsiders.enumerated() { try s.send(["op": "subscribe", "event_id": event, "ref": "o\(i)"]) }

        for (i, s) in staff.enumerated() {
            guard case .subscribed(let ref, _, let history, let unread, _) = try s.expect("subscribed") else { return XCTFail() }
            XCTAssertEqual(ref, "s\(i)")
            XCTAssertEqual(unread, 58)
            let expected = i % 4 == 0 ? Array(sent[50...]) : Array(sent[10...])
            XCTAssertEqual(history.map(\.id), expected.map(\.id))
            XCTAssertEqual(history.filter(\.read).map(\.id), [sent[58].id, sent[59].id])
            XCTAssertEqual(history.last?.readCount, 1)
        }
        for (i, s) in admins.enumerated() {
            guard case .subscribed(let ref, let summary, let history, let unread, _) = try s.expect("subscribed") else { return XCTFail() }
            XCTAssertEqual(ref, "a\(i)")
            XCTAssertEqual(summary.accessLevel, .admin)
            XCTAssertEqual(unread, 60)
            XCTAssertEqual(history.count, Limits.subscribeHistory)
            XCTAssertTrue(history.allSatisfy { !$0.read })
        }
        for (i, s) in outsiders.enumerated() {
            guard case .error(let ref, let e) = try s.expect("error") else { return XCTFail() }
            XCTAssertEqual(ref, "o\(i)")
            XCTAssertEqual(e.code, .notFound) // as for an event that does not exist
        }
        // And live fan-out reaches every batched subscriber exactly once.
        let live = try fixture.store.send(as: fixture.owner, SendRequest(eventID: fixture.event, message: "live"))
        for s in staff + admins {
            XCTAssertEqual(try s.expect("message").message?.id, live.id)
            try s.expectSilence(0.05)
        }
    }

    func testASubscribeToAnUnknownEventIsNotFound() throws {
        let s = try server.connect(fixture.staffToken)
        let e = try s.expectError(["op": "subscribe", "event_id": UUID().uuidString, "ref": "x"])
        XCTAssertEqual(e.code, .notFound)
    }
}
