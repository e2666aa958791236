import Foundation
import StaffcastClient
import StaffcastCore
import Logging
import StaffcastPostgres
@testable import StaffcastServer
import XCTest

/// The whole database goes away and comes back: clear errors, nothing stored, the server stays
/// up, reports not-ready, and recovers by itself. Uses a cluster of its own (it is stopped).
final class DatabaseDownTests: XCTestCase {
    func testAStoppedDatabaseIsReportedAndTheServerRecovers() throws {
        let own = try OwnCluster("sc-down")
        defer { own.remove() }
        let cluster = own.cluster
        let fixture = try Fixture(conninfo: cluster.conninfo)
        let server = try TestServer(conninfo: cluster.conninfo) { $0.opsToken = "ops-token-of-sixteen+" }
        defer { server.stop() }
        let owner = try server.connect(fixture.ownerToken)
        let path = "/v1/events/\(fixture.event.uuidString.lowercased())/messages"

        // A stalled database (every backend stopped, as on a paused VM): the ops status still
        // answers, from what the server knows, within its few seconds; it used to wait with
        // the workers until the database came back.
        let watcher = try PGConnection(conninfo: cluster.conninfo)
        let backends = try watcher.query("SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()")
        let pids = (0..<backends.rowCount).compactMap { backends.int($0, 0) }.map { pid_t($0) }
        XCTAssertFalse(pids.isEmpty)
        for pid in pids { kill(pid, SIGSTOP) }
        let asked = Date()
        let status = try server.api("ops-token-of-sixteen+").raw("GET", "/v1/status")
        for pid in pids { kill(pid, SIGCONT) }
        XCTAssertEqual(status.status, 200)
        XCTAssertLessThan(Date().timeIntervalSince(asked), 10, "the ops status waited on the stalled database")
        XCTAssertNotNil((try JSONSerialization.jsonObject(with: status.body) as? [String: Any])?["connections"])

        try cluster.stop()
        try waitUntil(10) { try server.api(nil).raw("GET", "/readyz").status != 200 }
        XCTAssertEqual(try server.api(nil).raw("GET", "/readyz").status, 503)
        XCTAssertEqual(try server.api(nil).raw("GET", "/healthz").status, 200, "the process still serves")

        let e = try owner.expectError(["op": "send", "event_id": fixture.event.uuidString, "message": "lost?"])
        XCTAssertEqual(e.code, .unavailable)
        XCTAssertTrue(e.message.contains("nothing was stored"), e.message)
        let r = try server.api(fixture.ownerToken).raw("POST", path, body: Data("lost?".utf8), contentType: "text/plain")
        XCTAssertEqual(r.status, 503)

        try cluster.ensureRunning(detached: true)
        try waitUntil(20, poll: 0.2) { try server.api(nil).raw("GET", "/readyz").status == 200 }
        XCTAssertEqual(try server.api(nil).raw("GET", "/readyz").status, 200)
        try owner.send(["op": "send", "event_id": fixture.event.uuidString, "message": "back again"])
        XCTAssertEqual(try owner.expect("sent").message?.message, "back again")
        XCTAssertEqual(try Fixture.count(conninfo: cluster.conninfo, "SELECT count(*) FROM staff_messages"), 1, "nothing half-written")
    }

    /// Answers and sends refused while the database is down stored nothing, so they do not count
    /// against the rate limits: the attack round found "I need help", refused five times during
    /// an outage, then refused again for the reply limit once the database was back.
    func testWhatAnOutageRefusedDoesNotCountAgainstTheRateLimits() throws {
        let own = try OwnCluster("sc-limits")
        defer { own.remove() }
        let fixture = try Fixture(conninfo: own.conninfo)
        let server = try TestServer(conninfo: own.conninfo) {
            $0.replyBurst = 2
            $0.replyRatePerMinute = 0.1
            $0.sendBurst = 2
            $0.sendRatePerSecond = 0.01
        }
        defer { server.stop() }
        let poll = try server.api(fixture.ownerToken).sendMessage(event: fixture.event, message: "Are you safe?", type: "alert",
                                                                  priority: "urgent", expiresInMinutes: nil, poll: ["I am safe", "I need help"])
        let owner = try server.connect(fixture.ownerToken)
        let staff = try server.connect(fixture.staffToken)

        try own.cluster.stop()
        for i in 0..<4 {
            XCTAssertEqual(try staff.expectError(["op": "answer", "message_id": poll.id.uuidString, "option": 1]).code, .unavailable, "answer \(i)")
            XCTAssertEqual(try owner.expectError(["op": "send", "event_id": fixture.event.uuidString, "message": "Stay where you are \(i)"]).code,
                           .unavailable, "send \(i)")
        }
        try own.cluster.ensureRunning(detached: true)
        XCTAssertTrue(try waitUntil(20, poll: 0.2) { try server.api(nil).raw("GET", "/readyz").status == 200 })
        try staff.send(["op": "answer", "ref": "help", "message_id": poll.id.uuidString, "option": 1])
        guard case .answered(let ref, _, let option) = try staff.expect("answered") else { return XCTFail("the answer after the outage was refused") }
        XCTAssertEqual(ref, "help")
        XCTAssertEqual(option, 1)
        try owner.send(["op": "send", "ref": "after", "event_id": fixture.event.uuidString, "message": "Help is on its way"])
        XCTAssertEqual(try owner.expect("sent").message?.message, "Help is on its way")
    }

    /// A database that stops answering (here its backend is stopped, as a host under memory
    /// pressure or a paused VM would) after a transaction was sent whole may still commit it
    /// when it resumes: the attack round found "nothing was stored" answered for an emergency
    /// that was then delivered, and the organiser led into sending it again. The error says the
    /// outcome is unknown, and the row does appear once the backend runs again.
    func testATransactionSentBeforeTheDatabaseStalledIsNotCalledLost() throws {
        let conninfo = try makeTestDatabase(migrated: false)
        let other = try PGConnection(conninfo: conninfo)
        try other.execute("CREATE TABLE probe (x int)")
        let conn = try PGConnection(conninfo: conninfo)
        let pidRow = try conn.query("SELECT pg_backend_pid()")
        let pid = try XCTUnwrap(pidRow.int(0, 0))
        XCTAssertEqual(kill(pid_t(pid), SIGSTOP), 0)
        var stopped = true
        defer { if stopped { kill(pid_t(pid), SIGCONT) } }
        do {
            _ = try conn.pipelinedTransaction([("INSERT INTO probe VALUES (1)", [])], timeout: 1)
            XCTFail("a stopped backend answered")
        } catch {
            XCTAssertEqual(error.code, .outcomeUnknown, "\(error)")
            let told = StaffcastError.from(error, logger: Logger(label: "test"))
            XCTAssertEqual(told.code, .unavailable)
            XCTAssertFalse(told.message.contains("nothing was stored"), told.message)
            XCTAssertTrue(told.message.contains("may still be carried out"), told.message)
        }
        kill(pid_t(pid), SIGCONT)
        stopped = false
        XCTAssertTrue(try waitUntil(10) { (try other.query("SELECT count(*) FROM probe").int(0, 0)) == 1 },
                      "the stalled backend committed what it had been sent")

        // A transaction that only opened (nothing can commit) is still reported as not done.
        let third = try PGConnection(conninfo: conninfo)
        let thirdRow = try third.query("SELECT pg_backend_pid()")
        let thirdPID = try XCTUnwrap(thirdRow.int(0, 0))
        try third.execute("BEGIN")
        XCTAssertEqual(kill(pid_t(thirdPID), SIGSTOP), 0)
        defer { kill(pid_t(thirdPID), SIGCONT) }
        XCTAssertThrowsError(try third.pipeline([("INSERT INTO probe VALUES (2)", [])], timeout: 1)) { error in
            XCTAssertEqual((error as? PostgresError)?.code, .connectionLost)
        }

        // Every other wait has its deadline too: preparing a statement, a query, a plain
        // statement (a stalled backend used to hold a worker in PQprepare for good).
        for call in ["prepare and query", "execute"] {
            let conn = try PGConnection(conninfo: conninfo)
            let row = try conn.query("SELECT pg_backend_pid()")
            let backend = try XCTUnwrap(row.int(0, 0))
            XCTAssertEqual(kill(pid_t(backend), SIGSTOP), 0)
            defer { kill(pid_t(backend), SIGCONT) }
            let asked = Date()
            XCTAssertThrowsError(call == "execute" ? try conn.execute("SELECT 1", timeout: 1)
                                                   : try conn.query("SELECT count(*) FROM probe WHERE x = $1", ["1"], timeout: 1), call)
            XCTAssertLessThan(Date().timeIntervalSince(asked), 10, "\(call) waited past its deadline")
            XCTAssertFalse(conn.isHealthy, "\(call): the connection is closed at the deadline")
        }
    }
}

extension Fixture {
    static func count(conninfo: String, _ sql: String, _ params: [String?] = []) throws -> Int {
        try PGConnection(conninfo: conninfo).query(sql, params).int(0, 0) ?? -1
    }
}
