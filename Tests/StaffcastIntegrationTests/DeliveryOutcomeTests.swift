import Foundation
import StaffcastClient
import StaffcastCore
import StaffcastPostgres
import StaffcastServer
import XCTest

/// A delivery made while PostgreSQL is away cannot record that it was made. Its outcome is kept
/// (`UnrecordedAttempts`) and written by the first outbox pass after the database is back, so
/// the row does not sit leased until its lease runs out (5 minutes) and the email is not sent
/// a second time then. The graceful-stop half of "not sent twice" is in `EmailTests`. Uses a
/// cluster of its own (it is stopped; the fixture's own connection goes with it), and a real SMTP server (aiosmtpd) that takes 6 s to
/// answer, so the database can go away while the email is in flight.
final class DeliveryOutcomeTests: XCTestCase {
    func testAnEmailSentWhileTheDatabaseRestartsIsRecordedOnceItIsBackAndNotSentAgain() throws {
        let own = try OwnCluster("sc-outcome")
        defer { own.remove() }
        let fixture = try Fixture(conninfo: own.conninfo)
        try fixture.store.setEmail(user: fixture.staff, email: "sam@example.org")
        let smtp = try Counterpart(["smtp", "--slow", "6"])
        defer { smtp.stop() }
        let port = smtp.port
        let server = try TestServer(conninfo: own.conninfo) {
            $0.reach.smtpURL = "smtp://127.0.0.1:\(port)"
            $0.reach.emailFrom = "staffcast@example.org"
            $0.reach.emailAfterSeconds = 1
        }
        defer { server.stop() }
        let m = try server.api(fixture.ownerToken).sendMessage(event: fixture.event, message: "Fire at stage 2", type: "emergency",
                                                               priority: "urgent", expiresInMinutes: nil)
        let id = m.id.uuidString.lowercased()

        // The SMTP server has the email's data and answers in 6 s: the database goes now.
        smtp.wait { ($0["data_started"] as? [String])?.contains("sam@example.org") == true }
        try own.cluster.stop()
        let sent = smtp.wait { ($0["rcpt_tos"] as? [String])?.contains("sam@example.org") == true }
        XCTAssertEqual(sent.count, 1)
        // The attempt's outcome is decided (and counted) just before it is written, while the
        // database is still away.
        XCTAssertTrue(waitUntil(10) {
            let metrics = String(decoding: (try? server.api(nil).call("GET", "/metrics")) ?? Data(), as: UTF8.self)
            return metrics.contains(#"staffcast_outbox_attempts_total{kind="email",outcome="delivered"} 1"#)
        }, "the delivered email was not counted")

        try own.cluster.ensureRunning(detached: true)
        let recorded = waitUntil(30, poll: 0.2) {
            (try? Fixture.count(conninfo: own.conninfo, "SELECT count(*) FROM outbox WHERE kind = 'email' AND message_id = $1 AND status = 'done'", [id])) == 1
        }
        XCTAssertTrue(recorded, "the email's outcome, kept while the database was away, was not recorded within 30 s of its return")
        XCTAssertEqual(try Fixture.count(conninfo: own.conninfo, """
            SELECT count(*) FROM outbox WHERE kind = 'email' AND message_id = $1 AND status = 'pending'
            """, [id]), 0, "nothing is left to send that email again")

        // A few more passes (one a second) find nothing to send: still the one email. (A wait
        // for something not to happen: a fixed time by nature.)
        Thread.sleep(forTimeInterval: 3)
        XCTAssertEqual(smtp.requests.filter { ($0["rcpt_tos"] as? [String])?.contains("sam@example.org") == true }.count, 1,
                       "the email was sent again")
    }
}
