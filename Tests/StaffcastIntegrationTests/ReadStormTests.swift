import Foundation
import StaffcastClient
import StaffcastCore
import StaffcastPostgres
import StaffcastServer
import XCTest

/// Marks folded into batches keep `read_by` exact: every reader once, nobody without access,
/// and each mark answered with its own unread count.
final class ReadStormTests: IntegrationTestCase {
    override func setUpWithError() throws {
        try super.setUpWithError()
    }

    func readers(of message: UUID) throws -> [String] {
        let r = try fixture.store.conn.query("SELECT unnest(read_by)::text FROM staff_messages WHERE id = $1",
                                             [message.uuidString.lowercased()])
        return (0..<r.rowCount).compactMap { r.string($0, 0) }
    }

    func testABatchOfMarksAppendsEachReaderOnceAndRefusesOutsiders() throws {
        let a = try fixture.store.send(as: fixture.owner, SendRequest(eventID: fixture.event, message: "Evacuate hall B"))
        let b = try fixture.store.send(as: fixture.owner, SendRequest(eventID: fixture.event, message: "Second"))
        let results = try fixture.store.markReadBatch([
            .init(user: fixture.staff, message: a.id),
            .init(user: fixture.staff, message: a.id),       // twice in one batch
            .init(user: fixture.admin, message: a.id),
            .init(user: fixture.outsider, message: a.id),    // no access
            .init(user: fixture.staff, message: UUID()),     // no such message
            .init(user: fixture.admin, message: b.id),
        ])
        XCTAssertEqual(results.map { $0?.eventID }, [fixture.event, fixture.event, fixture.event, nil, nil, fixture.event])
        XCTAssertEqual(results[0]?.unreadCount, 1) // staff: b unread
        XCTAssertEqual(results[2]?.unreadCount, 0) // admin read a here and b in the same batch
        XCTAssertEqual(results[5]?.unreadCount, 0)
        XCTAssertEqual(Set(try readers(of: a.id)), [fixture.staff, fixture.admin].map { $0.uuidString.lowercased() }.reduce(into: Set()) { $0.insert($1) })
        XCTAssertEqual(try readers(of: a.id).count, 2)
        // Again: nothing changes.
        _ = try fixture.store.markReadBatch([.init(user: fixture.staff, message: a.id)])
        XCTAssertEqual(try readers(of: a.id).count, 2)
    }

    func testConcurrentMarksOfOneUserOverSeveralConnectionsLeaveOneEntry() throws {
        let server = try TestServer(conninfo: fixture.conninfo) { $0.serviceThreads = 2 }
        let other = try TestServer(conninfo: fixture.conninfo)
        defer { server.stop(); other.stop() }
        let message = try fixture.store.send(as: fixture.owner, SendRequest(eventID: fixture.event, message: "Read me"))
        for trial in 0..<5 {
            let m = trial == 0 ? message
                : try fixture.store.send(as: fixture.owner, SendRequest(eventID: fixture.event, message: "Read me \(trial)"))
            let sockets = try (0..<4).map { _ in try server.connect(fixture.staffToken) }
                + (0..<4).map { _ in try other.connect(fixture.staffToken) }
            for s in sockets {
                try s.send(["op": "mark_read", "message_id": m.id.uuidString, "ref": "r"])
            }
            for s in sockets {
                guard case .read(_, let id, let event, _, _) = try s.expect("read") else { return XCTFail() }
                XCTAssertEqual(id, m.id)
                XCTAssertEqual(event, fixture.event)
            }
            XCTAssertEqual(try readers(of: m.id), [fixture.staff.uuidString.lowercased()], "trial \(trial)")
            sockets.forEach { $0.close() }
        }
    }

    /// The largest batch the ReadBatcher makes (2,000 marks), with a few repeats: every reader
    /// stored once, each answered with its unread count.
    func testAFullBatchOfMarksStoresEachReaderOnce() throws {
        let conn = try PGConnection(conninfo: fixture.conninfo)
        try conn.query("""
            INSERT INTO profiles (id, display_name) SELECT gen_random_uuid(), 'reader ' || g FROM generate_series(1, 1990) g
            """)
        try conn.query("""
            INSERT INTO event_access (event_id, user_id, access_level)
            SELECT $1, id, 'staff' FROM profiles WHERE display_name LIKE 'reader %'
            """, [fixture.event.uuidString])
        let users = try conn.query("SELECT id FROM profiles WHERE display_name LIKE 'reader %'")
        let ids = (0..<users.rowCount).compactMap { users.uuid($0, 0) }
        let message = try fixture.store.send(as: fixture.owner, SendRequest(eventID: fixture.event, message: "Evacuate hall B",
                                                                            messageType: "emergency", priority: "urgent"))
        let reads = (ids + ids.prefix(10)).map { Store.PendingRead(user: $0, message: message.id) }
        XCTAssertEqual(reads.count, 2_000)
        let results = try fixture.store.markReadBatch(reads)
        XCTAssertEqual(results.compactMap { $0 }.count, 2_000)
        XCTAssertTrue(results.allSatisfy { $0?.unreadCount == 0 && $0?.eventID == fixture.event })
        XCTAssertEqual(try readers(of: message.id).count, 1_990)
        XCTAssertEqual(try conn.query("SELECT read_count FROM staff_messages WHERE id = $1", [message.id.uuidString]).int(0, 0), 1_990)
        XCTAssertEqual(try fixture.store.receipts(as: fixture.owner, message: message.id).readBy.count, 1_990)
    }

    func testAStormOfReadersSettlesWithEveryReaderAnswered() throws {
        let server = try TestServer(conninfo: fixture.conninfo) { $0.maxConnectionsPerUser = 1_000 }
        defer { server.stop() }
        // 60 staff members, one connection each.
        var tokens: [(UUID, String)] = []
        let known = server.validTokens
        for i in 0..<60 {
            tokens.append(try fixture.person("Staff \(i)"))
        }
        XCTAssertTrue(waitUntil(10) { server.validTokens >= known + 60 }, "the new tokens never reached the server's table")
        let message = try fixture.store.send(as: fixture.owner, SendRequest(eventID: fixture.event, message: "Emergency",
                                                                            messageType: "emergency", priority: "urgent"))
        let sockets = try tokens.map { try server.connect($0.1) }
        for s in sockets { try s.send(["op": "mark_read", "message_id": message.id.uuidString, "ref": "r"]) }
        for s in sockets {
            guard case .read(let ref, _, _, let unread, _) = try s.expect("read") else { return XCTFail() }
            XCTAssertEqual(ref, "r")
            XCTAssertEqual(unread, 0)
        }
        let stored = try readers(of: message.id)
        XCTAssertEqual(stored.count, 60)
        XCTAssertEqual(Set(stored), Set(tokens.map { $0.0.uuidString.lowercased() }))
        let receipts = try fixture.store.receipts(as: fixture.owner, message: message.id)
        XCTAssertEqual(receipts.readBy.count, 60)
        let metrics = String(decoding: try server.api(nil).call("GET", "/metrics"), as: UTF8.self)
        XCTAssertTrue(metrics.contains("staffcast_read_batch_size"))
    }
}
