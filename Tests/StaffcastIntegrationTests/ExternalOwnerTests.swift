import Foundation
import StaffcastClient
import StaffcastCore
import StaffcastPostgres
import XCTest

/// An external PostgreSQL set up as docs/operations.md (database roles) says: the tables' owner
/// is an ordinary login (no superuser, no CREATEROLE), a superuser made the roles once, the
/// owner migrates, and the server serves as `staffcast_server`.
final class ExternalOwnerTests: XCTestCase {
    func testAnOrdinaryOwnerMigratesAndTheServerServesAsTheLogin() throws {
        let cluster = try TestDatabase.cluster()
        let superuser = try PGConnection(conninfo: cluster.conninfo(database: "postgres"))
        let suffix = UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(12)
        let owner = "ext_owner_\(suffix)", database = "ext_\(suffix)"
        // Dropped when the test ends, so that the shared cluster does not keep one of each per run.
        let admin = cluster.conninfo(database: "postgres")
        addTeardownBlock {
            guard let c = try? PGConnection(conninfo: admin) else { return }
            _ = try? c.execute("DROP DATABASE IF EXISTS \(database) WITH (FORCE)")
            _ = try? c.execute("DROP ROLE IF EXISTS \(owner)")
        }
        // What the superuser runs once (docs/operations.md); the two staffcast roles exist in
        // this cluster already (other databases' migrations made them), as after a first set-up.
        try superuser.execute("""
            DO $$ BEGIN
                IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'staffcast_app') THEN
                    CREATE ROLE staffcast_app NOLOGIN NOINHERIT; END IF;
                IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'staffcast_server') THEN
                    CREATE ROLE staffcast_server LOGIN NOINHERIT NOSUPERUSER NOCREATEDB NOCREATEROLE NOBYPASSRLS; END IF;
            END $$;
            CREATE ROLE \(owner) LOGIN;
            GRANT staffcast_app TO \(owner);
            GRANT staffcast_app TO staffcast_server;
            """)
        try superuser.execute("CREATE DATABASE \(database) OWNER \(owner)")
        let ownerURL = cluster.conninfo(database: database, user: owner)
        let ownerConn = try PGConnection(conninfo: ownerURL)
        XCTAssertEqual(try ownerConn.query("SELECT rolsuper OR rolcreaterole FROM pg_roles WHERE rolname = current_user").bool(0, 0), false)

        try Migrator(migrations: try TestDatabase.migrations(), logger: TestDatabase.logger).migrate(ownerConn)
        let fixture = try Fixture(conninfo: ownerURL)
        let server = try TestServer(conninfo: ownerURL.replacingOccurrences(of: "user=\(owner) ", with: "user=staffcast_server "))
        defer { server.stop() }
        let staff = try server.subscriber(fixture.staffToken, fixture.event)
        let r = try server.api(fixture.ownerToken).raw("POST", "/v1/events/\(fixture.event.uuidString.lowercased())/messages",
                                                       body: Data("served as the login".utf8), contentType: "text/plain")
        XCTAssertEqual(r.status, 201, String(decoding: r.body, as: UTF8.self))
        XCTAssertEqual(try staff.expect("message").message?.message, "served as the login")
        // The login cannot become this owner either.
        let login = try PGConnection(conninfo: cluster.conninfo(database: database, user: "staffcast_server"))
        XCTAssertThrowsError(try login.execute("SET ROLE \(owner)"))
    }
}
