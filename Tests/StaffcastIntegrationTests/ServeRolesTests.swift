import Foundation
import StaffcastClient
import StaffcastCore
import StaffcastPostgres
import XCTest

/// `staffcast serve` with separate roles on a database given by URL (an external PostgreSQL as
/// far as staffcast knows): it serves as the login, migrates as the owner only when the schema
/// is behind, runs with the login alone once migrated, and warns when asked to serve as a
/// superuser.
final class ServeRolesTests: XCTestCase {
    func testServesAsTheLoginAloneOnceMigratedAndWarnsWhenServingAsASuperuser() throws {
        // Migrated by `serve` itself through --migrate-database-url (the owner).
        let owner = try makeTestDatabase(migrated: false)
        let login = TestDatabase.serverLogin(owner)
        var serve = try ServeProcess(databaseURL: login, migrateURL: owner, config: "", logLevel: "warning")
        let fixture = try Fixture(conninfo: owner)
        var api = try APIClient(server: serve.url, token: fixture.ownerToken)
        // The tokens were issued after the server started: they reach it within 2 s.
        try waitUntil(5, poll: 0.05) { try api.raw("GET", "/v1/me/events").status != 401 }
        XCTAssertEqual(try api.raw("POST", "/v1/events/\(fixture.event.uuidString.lowercased())/messages",
                                   body: Data("as the login".utf8), contentType: "text/plain").status, 201)
        serve.stop()
        XCTAssertFalse(serve.log.contains("superuser"), serve.log)
        let who = try PGConnection(conninfo: owner).query("SELECT count(*) FROM schema_migrations").int(0, 0) ?? 0
        XCTAssertGreaterThan(who, 0)

        // Once migrated, the login alone (no owner's URL anywhere) serves.
        serve = try ServeProcess(databaseURL: login, migrateURL: nil, config: "", logLevel: "warning")
        api = try APIClient(server: serve.url, token: fixture.staffToken)
        XCTAssertEqual(try api.raw("GET", "/v1/events/\(fixture.event.uuidString.lowercased())/messages").status, 200)
        serve.stop()
        XCTAssertFalse(serve.log.contains("superuser"), serve.log)

        // Serving as the owner (a superuser here) works but says loudly that it should not.
        serve = try ServeProcess(databaseURL: owner, migrateURL: nil, config: "", logLevel: "warning")
        serve.stop()
        XCTAssertTrue(serve.log.contains("superuser, bypasses row-level security or owns the tables"), serve.log)
    }
}
