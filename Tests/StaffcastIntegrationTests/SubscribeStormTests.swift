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

    /// Corrections made while a crowd reconnects reach everyone: a subscribe's snapshot that
    /// predates an edit which was handed on before the connection joined the channel used to
    /// miss it (neither in the catch-up nor live). Each socket ends with the last text, seen
    /// through the catch-up before `subscribed`, the replay after it, or live.
    func testEditsDuringAReconnectStormReachEverySubscriberWithTheLastText() throws {
        let m = try fixture.store.send(as: fixture.admin, SendRequest(eventID: fixture.event, message: "Meet at gate 1"))
        let sockets = try (0..<150).map { _ in try server.connect(fixture.staffToken) }
        // Subscribes go out in groups with an edit committed after each, while the group's
        // snapshots are on their way.
        let edits = 12
        for (i, group) in stride(from: 0, to: sockets.count, by: sockets.count / edits).enumerated() {
            for socket in sockets[group..<min(group + sockets.count / edits, sockets.count)] {
                try socket.send(["op": "subscribe", "event_id": fixture.event.uuidString.lowercased(), "since_seq": m.seq, "ref": "s"])
            }
            if i < edits { _ = try fixture.store.editMessage(as: fixture.admin, messageID: m.id, text: "Meet at gate \(i + 2)") }
        }
        let last = "Meet at gate \(edits + 1)"
        // Read every socket in turn (each answers its pings while read) until all have settled.
        var texts = sockets.map { _ in m.message }, subscribed = sockets.map { _ in false }
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline, sockets.indices.contains(where: { texts[$0] != last || !subscribed[$0] }) {
            for (n, socket) in sockets.enumerated() {
                while let frame = try socket.nextOrNil(timeout: 0.01) {
                    if case .messageUpdated(nil, let updated) = frame, updated.id == m.id { texts[n] = updated.message }
                    if case .subscribed = frame { subscribed[n] = true }
                }
            }
        }
        XCTAssertEqual(subscribed.filter { !$0 }.count, 0, "sockets without an answer")
        XCTAssertEqual(Dictionary(grouping: texts.indices.filter { texts[$0] != last }, by: { texts[$0] }).mapValues(\.count), [:],
                       "sockets that kept an older text (text: how many)")
    }

    func testASubscribeToAnUnknownEventIsNotFound() throws {
        let s = try server.connect(fixture.staffToken)
        let e = try s.expectError(["op": "subscribe", "event_id": UUID().uuidString, "ref": "x"])
        XCTAssertEqual(e.code, .notFound)
    }
}
