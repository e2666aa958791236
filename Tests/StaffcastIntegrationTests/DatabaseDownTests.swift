import Foundation
import StaffcastClient
import StaffcastCore
import StaffcastPostgres
import XCTest

/// The whole database goes away and comes back: clear errors, nothing stored, the server stays
/// up, reports not-ready, and recovers by itself. Uses a cluster of its own (it is stopped).
final class DatabaseDownTests: XCTestCase {
    func testAStoppedDatabaseIsReportedAndTheServerRecovers() throws {
        let own = try OwnCluster("sc-down")
        defer { own.remove() }
        let cluster = own.cluster
        let fixture = try Fixture(conninfo: cluster.conninfo)
        let server = try TestServer(conninfo: cluster.conninfo)
        defer { server.stop() }
        let owner = try server.connect(fixture.ownerToken)
        let path = "/v1/events/\(fixture.event.uuidString.lowercased())/messages"

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
}

extension Fixture {
    static func count(conninfo: String, _ sql: String) throws -> Int {
        try PGConnection(conninfo: conninfo).query(sql).int(0, 0) ?? -1
    }
}
