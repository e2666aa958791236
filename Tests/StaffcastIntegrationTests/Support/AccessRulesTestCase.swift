import Foundation
import StaffcastPostgres
import XCTest

/// The base of the tests that check row-level security directly in PostgreSQL: a connection
/// of its own to the test's database that acts as a user the way the server does (`SET LOCAL
/// ROLE staffcast_app` and `staffcast.user_id`), and the assertion that PostgreSQL refused.
class AccessRulesTestCase: IntegrationTestCase {
    var conn: PGConnection!

    override func setUpWithError() throws {
        try super.setUpWithError()
        conn = try PGConnection(conninfo: fixture.conninfo)
    }

    override func tearDown() {
        conn = nil // before the base drops the database
        super.tearDown()
    }

    /// `body` in a transaction as `user`.
    func asUser<T>(_ user: UUID, _ body: (PGConnection) throws -> T) throws -> T {
        try conn.transaction(asUser: user, "READ COMMITTED", body)
    }

    /// `body` throws PostgreSQL's "insufficient privilege" (42501): row-level security refused.
    func assertRLSRefuses(_ body: () throws -> Void, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try body(), file: file, line: line) { error in
            XCTAssertEqual((error as? PostgresError)?.sqlState, "42501", "\(error)", file: file, line: line)
        }
    }
}
