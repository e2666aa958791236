import Foundation
import StaffcastClient
import StaffcastCore
import StaffcastPostgres
import StaffcastServer
import XCTest

/// Sends committed in groups: one transaction for many, each as its own sender under
/// row-level security, each with its own outcome, nothing acknowledged before the commit.
final class GroupCommitTests: IntegrationTestCase {
    override func setUpWithError() throws {
        try super.setUpWithError()
    }

    func testABatchStoresWhatEachSenderMayAndNothingElse() throws {
        let event = fixture.event
        let sends = [
            Store.PendingSend(sender: fixture.owner, request: try SendRequest(eventID: event, message: "owner 1")),
            Store.PendingSend(sender: fixture.staff, request: try SendRequest(eventID: event, message: "staff may not")),
            Store.PendingSend(sender: fixture.admin, request: try SendRequest(eventID: event, message: "admin 1", priority: "urgent",
                                                                               expiresInMinutes: 5)),
            Store.PendingSend(sender: fixture.outsider, request: try SendRequest(eventID: event, message: "outsider")),
            Store.PendingSend(sender: fixture.owner, request: try SendRequest(eventID: UUID(), message: "no such event")),
            Store.PendingSend(sender: fixture.owner, request: try SendRequest(eventID: event, message: "owner 2")),
        ]
        let stored = try fixture.store.sendBatch(sends)
        XCTAssertEqual(stored.map { $0?.message }, ["owner 1", nil, "admin 1", nil, nil, "owner 2"])
        XCTAssertEqual(stored[0]?.senderID, fixture.owner)
        XCTAssertEqual(stored[2]?.priority, .urgent)
        XCTAssertNotNil(stored[2]?.expiresAt)
        XCTAssertEqual(stored[0].map(\.id), sends[0].id)
        // Seq order follows the order within a sender.
        XCTAssertLessThan(try XCTUnwrap(stored[0]?.seq), try XCTUnwrap(stored[5]?.seq))
        XCTAssertEqual(fixture.messageCount, 3)
        // The refused ones get their precise errors when asked alone, and store nothing.
        XCTAssertThrowsError(try fixture.store.send(as: fixture.staff, sends[1].request)) {
            XCTAssertEqual(($0 as? StaffcastError)?.code, .forbidden)
        }
        XCTAssertThrowsError(try fixture.store.send(as: fixture.owner, sends[4].request)) {
            XCTAssertEqual(($0 as? StaffcastError)?.code, .notFound)
        }
        XCTAssertEqual(fixture.messageCount, 3)
    }

    /// libpq pipeline mode: one failing statement fails the transaction as a whole (nothing
    /// committed, its own error thrown), and the connection carries on.
    func testAFailedStatementInAPipelinedTransactionCommitsNothing() throws {
        let conn = try PGConnection(conninfo: fixture.conninfo)
        try conn.execute("CREATE TABLE t (n int PRIMARY KEY)")
        XCTAssertThrowsError(try conn.pipelinedTransaction([
            ("INSERT INTO t VALUES ($1)", ["1"]), ("INSERT INTO t VALUES ($1)", ["1"]), ("INSERT INTO t VALUES ($1)", ["2"]),
        ])) { XCTAssertEqual(($0 as? PostgresError)?.sqlState, "23505", "\($0)") }
        XCTAssertEqual(try conn.query("SELECT count(*) FROM t").int(0, 0), 0)
        let results = try conn.pipelinedTransaction([
            ("INSERT INTO t VALUES ($1) RETURNING n", ["1"]), ("INSERT INTO t VALUES ($1) RETURNING n", ["2"]),
        ])
        XCTAssertEqual(results.map { $0.int(0, 0) }, [1, 2])
        XCTAssertEqual(try conn.query("SELECT count(*) FROM t").int(0, 0), 2)
    }

    /// A pipeline whose statements and results are each larger than the socket buffers: both
    /// sides write at once, and reading while writing keeps either from blocking the other
    /// (with blocking writes this deadlocked, as a read storm's batch of 2,000 marks did).
    func testAPipelineLargerThanTheSocketBuffersCompletes() throws {
        let conn = try PGConnection(conninfo: fixture.conninfo)
        let big = String(repeating: "y", count: 1_000_000)
        let statement = "SELECT g, length($2::text), repeat('x', 200) FROM generate_series(1, $1::int) g"
        let results = try conn.pipelinedTransaction(Array(repeating: (statement, ["5000", big]), count: 4))
        XCTAssertEqual(results.map(\.rowCount), [5_000, 5_000, 5_000, 5_000])
        XCTAssertEqual(results[3].int(4_999, 1), 1_000_000)
        XCTAssertEqual(try conn.query("SELECT 1").int(0, 0), 1, "the connection carries on after the pipeline")
    }

    /// Notifications committed in one pipelined transaction: each row judged as its own sender
    /// by row-level security; a refused one stores nothing and leaves the others committed.
    func testANotificationBatchStoresWhatEachSenderMayAndNothingElse() throws {
        func note(_ sender: UUID, to user: UUID, _ title: String) throws -> Store.PendingNotification {
            Store.PendingNotification(sender: sender, request: try NotificationRequest(
                userID: user, type: "shift", title: title, message: "m", data: .object(["gate": .number(3)])))
        }
        let batch = [
            try note(fixture.admin, to: fixture.staff, "admin to staff"),
            try note(fixture.staff, to: fixture.admin, "staff may not"),
            try note(fixture.owner, to: fixture.outsider, "outsider is not on the event"),
            try note(fixture.owner, to: UUID(), "no such user"),
            try note(fixture.owner, to: fixture.staff, "owner to staff"),
        ]
        let stored = try fixture.store.createNotificationBatch(batch)
        XCTAssertEqual(stored.map { $0?.title }, ["admin to staff", nil, nil, nil, "owner to staff"])
        let mine = try fixture.store.notifications(as: fixture.staff, unreadOnly: false)
        XCTAssertEqual(Set(mine.map(\.title)), ["admin to staff", "owner to staff"])
        XCTAssertEqual(mine.first { $0.title == "admin to staff" }?.data, .object(["gate": .number(3)]))
        XCTAssertEqual(try fixture.store.notifications(as: fixture.admin, unreadOnly: false), [])
        XCTAssertEqual(try fixture.store.notifications(as: fixture.outsider, unreadOnly: false), [])
        XCTAssertThrowsError(try fixture.store.createNotification(as: fixture.staff, batch[1].request)) {
            XCTAssertEqual(($0 as? StaffcastError)?.code, .forbidden)
        }
    }

    func testConcurrentSendsAreEachAnsweredOnceWithTheirOwnOutcome() throws {
        let server = try TestServer(conninfo: fixture.conninfo) {
            $0.sendBurst = 1_000
            $0.sendRatePerSecond = 1_000
            $0.maxInFlightPerConnection = 1_000
        }
        defer { server.stop() }
        let owner = try server.connect(fixture.ownerToken)
        let staff = try server.connect(fixture.staffToken)
        let event = fixture.event.uuidString
        for i in 0..<150 {
            try owner.send(["op": "send", "event_id": event, "message": "m\(i)", "ref": "o\(i)"])
            if i % 10 == 0 { try staff.send(["op": "send", "event_id": event, "message": "s\(i)", "ref": "s\(i)"]) }
        }
        var acked: [String: StaffMessage] = [:]
        while acked.count < 150 {
            guard case .sent(let ref?, let message) = try owner.expect("sent") else { return XCTFail() }
            XCTAssertNil(acked[ref], "each send is answered once")
            acked[ref] = message
        }
        for i in 0..<150 { XCTAssertEqual(acked["o\(i)"]?.message, "m\(i)") }
        // Within one connection, acknowledged order is send order, and seq follows it.
        let seqs = (0..<150).compactMap { acked["o\($0)"]?.seq }
        XCTAssertEqual(seqs, seqs.sorted())
        var refused: Set<String> = []
        for _ in stride(from: 0, to: 150, by: 10) {
            guard case .error(let ref?, let e) = try staff.expect("error") else { return XCTFail() }
            XCTAssertEqual(e.code, .forbidden)
            XCTAssertTrue(refused.insert(ref).inserted, "each refusal once")
        }
        XCTAssertEqual(refused, Set(stride(from: 0, to: 150, by: 10).map { "s\($0)" }))
        XCTAssertEqual(fixture.messageCount, 150)
        let metrics = String(decoding: try server.api(nil).call("GET", "/metrics"), as: UTF8.self)
        XCTAssertTrue(metrics.contains("staffcast_send_batch_size"), "batch sizes are measured")
    }

    func testControlCharactersAreRefusedAndNothingIsStored() throws {
        for text in ["a\u{0}b", "\u{0}start", "bell\u{7}", "del\u{7F}"] {
            XCTAssertThrowsError(try SendRequest(eventID: fixture.event, message: text)) {
                XCTAssertEqual(($0 as? StaffcastError)?.code, .invalid)
            }
        }
        XCTAssertNoThrow(try SendRequest(eventID: fixture.event, message: "line one\nline two\r\n\ttabbed"))
        for (title, message) in [("a\u{0}b", "fine"), ("fine", "x\u{1B}[31m")] {
            XCTAssertThrowsError(try NotificationRequest(userID: fixture.staff, type: "info", title: title, message: message, data: nil)) {
                XCTAssertEqual(($0 as? StaffcastError)?.code, .invalid)
            }
        }
        let server = try TestServer(conninfo: fixture.conninfo)
        defer { server.stop() }
        let r = try server.api(fixture.ownerToken).raw("POST", "/v1/events/\(fixture.event.uuidString)/messages",
                                                       body: Data(#"{"message":"a\u0000b"}"#.utf8), contentType: "application/json")
        XCTAssertEqual(r.status, 400)
        XCTAssertTrue(String(decoding: r.body, as: UTF8.self).contains("control character"))
        XCTAssertEqual(fixture.messageCount, 0)
    }
}
