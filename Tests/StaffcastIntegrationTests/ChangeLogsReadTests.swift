import Foundation
import StaffcastCore
import StaffcastPostgres
import XCTest

/// A read of the change feed woken by notifications reads only the logs they name
/// (`ChangeLogs`): the others keep their cursors and are read later, and access and token
/// changes are read every time (they gate everything else).
final class ChangeLogsReadTests: XCTestCase {
    func testAReadOfSomeLogsKeepsTheOthersCursorsAndAlwaysReadsAccessAndTokens() throws {
        let fixture = try Fixture(conninfo: try makeTestDatabase())
        let store = fixture.store
        let start = try store.currentCursors()
        let message = try store.send(as: fixture.owner, SendRequest(eventID: fixture.event, message: "Gates open"))
        XCTAssertTrue(try store.revoke(event: fixture.event, user: fixture.staff))
        _ = try store.issueToken(user: fixture.admin)

        // Only the notification log named: access and token changes come anyway, the message waits.
        let partial = try store.changes(after: start, logs: [.notification])
        XCTAssertEqual(partial.access.map(\.userID), [fixture.staff])
        XCTAssertEqual(partial.tokens.count, 1)
        XCTAssertTrue(partial.messages.isEmpty)
        XCTAssertEqual(partial.cursors.message, start.message, "a log not read keeps its cursor")

        // The message log's read picks it up from there, once.
        let next = try store.changes(after: partial.cursors, logs: ChangeLogs.toRead(after: ["message"]))
        XCTAssertEqual(next.messages.map(\.seq), [message.seq])
        XCTAssertTrue(next.access.isEmpty)
        XCTAssertTrue(next.tokens.isEmpty)
        XCTAssertTrue(try store.changes(after: next.cursors).isEmpty, "nothing twice, nothing left")
    }
}
