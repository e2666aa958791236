import Foundation
import StaffcastClient
import StaffcastCore
import StaffcastPostgres
import StaffcastServer
import XCTest

/// Email for the unreached against a real SMTP server (PyPI aiosmtpd on loopback,
/// `scripts/test-counterparts.py smtp`): an unread emergency is emailed once after
/// `email_after_seconds`; a read one and a normal message are not.
final class EmailTests: IntegrationTestCase {
    var smtp: Counterpart!
    var li: UUID!
    var liToken: String!

    override func setUpWithError() throws {
        try super.setUpWithError()
        (li, liToken) = try fixture.person("Li Staff", email: "li@example.org")
        try fixture.store.setEmail(user: fixture.staff, email: "sam@example.org")
        smtp = try Counterpart(["smtp"])
        let port = smtp.port
        try startServer {
            $0.reach.smtpURL = "smtp://127.0.0.1:\(port)"
            $0.reach.emailFrom = "staffcast@example.org"
            $0.reach.emailAfterSeconds = 2
            $0.reach.publicURL = "https://staff.example.org"
        }
    }

    override func tearDown() {
        smtp?.stop()
        smtp = nil
        super.tearDown()
    }

    func id(_ u: UUID) -> String { u.uuidString.lowercased() }

    func testAnUnreadEmergencyIsEmailedOnceAndNothingElseIs() throws {
        // Li is connected and reads the emergency at once; Sam is not connected.
        let liSocket = try server.connect(liToken)
        defer { liSocket.close() }
        _ = try liSocket.subscribe(fixture.event)
        // "Live" in the funnel is what the presence table says (written every 3 s): wait for Li's row.
        XCTAssertTrue(try waitUntil(15) {
            try fixture.count("SELECT count(*) FROM presence WHERE user_id = $1", [id(li)]) > 0
        })
        let api = try server.api(fixture.ownerToken)
        let normal = try api.sendMessage(event: fixture.event, message: "Lunch at noon", type: nil, priority: nil, expiresInMinutes: nil)
        let emergency = try api.sendMessage(event: fixture.event, message: "Evacuate hall B\nUse exit 4", type: "emergency",
                                            priority: "urgent", expiresInMinutes: nil)
        while let frame = try liSocket.nextOrNil(timeout: 5) {
            if frame.message?.id == emergency.id { break }
        }
        try liSocket.send(["op": "mark_read", "message_id": id(emergency.id)])
        _ = try liSocket.expect("read")

        let mail = smtp.wait { ($0["rcpt_tos"] as? [String]) == ["sam@example.org"] }.first ?? [:]
        XCTAssertEqual(mail["mail_from"] as? String, "staffcast@example.org")
        let data = mail["data"] as? String ?? ""
        XCTAssertTrue(data.contains("Subject: [EMERGENCY] Summer Festival: Evacuate hall B Use exit 4"), data)
        XCTAssertTrue(data.contains("Evacuate hall B\r\nUse exit 4"), data)
        XCTAssertTrue(data.contains("https://staff.example.org/app"), "a link to the app: \(data)")
        XCTAssertTrue(data.contains("To: \"Sam Staff\" <sam@example.org>"), data)

        // Every email row is finished: Sam's sent, Li's skipped (read in time); none for the
        // normal message, and the SMTP server saw exactly one email.
        XCTAssertTrue(try waitUntil(15) {
            try fixture.count("SELECT count(*) FROM outbox WHERE kind = 'email' AND status = 'pending'") == 0
                && (try fixture.count("SELECT count(*) FROM staff_messages WHERE seq > (SELECT seq FROM fanout_cursor)")) == 0
        })
        XCTAssertEqual(try fixture.count("SELECT count(*) FROM outbox WHERE kind = 'email' AND message_id = $1", [id(normal.id)]), 0)
        XCTAssertEqual(try fixture.count("SELECT count(*) FROM outbox WHERE kind = 'email' AND user_id = $1 AND status = 'skipped'",
                                         [id(li)]), 1)
        XCTAssertEqual(try fixture.count("SELECT count(*) FROM message_reach WHERE message_id = $1 AND user_id = $2 AND via = 'email'",
                                         [id(emergency.id), id(fixture.staff)]), 1)
        let funnel = try server.api(fixture.ownerToken).receipts(message: emergency.id).list
        XCTAssertEqual(funnel.totals.email, 1)
        XCTAssertEqual(funnel.totals.read, 1)
        XCTAssertEqual(funnel.unreadBy.first { $0.userID == fixture.staff }?.reached.map(\.via), ["email"])
        XCTAssertEqual(funnel.readBy.first { $0.userID == li }?.reached.map(\.via), ["live"])
        // A restart does not send it again.
        server.stop()
        let port = smtp.port
        server = try TestServer(conninfo: fixture.conninfo) {
            $0.reach.smtpURL = "smtp://127.0.0.1:\(port)"
            $0.reach.emailFrom = "staffcast@example.org"
            $0.reach.emailAfterSeconds = 2
        }
        _ = try server.api(fixture.ownerToken).sendMessage(event: fixture.event, message: "A later normal one", type: nil,
                                                           priority: nil, expiresInMinutes: nil)
        XCTAssertTrue(try waitUntil(15) {
            try fixture.count("SELECT count(*) FROM staff_messages WHERE seq > (SELECT seq FROM fanout_cursor)") == 0
        })
        XCTAssertEqual(smtp.requests.count, 1, "exactly one email: \(smtp.requests)")
    }

    func testStartTLSAndCredentialsAreUsedWhenTheServerAsksForThem() throws {
        server.stop()
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("staffcast-smtp-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let secure = try Counterpart(["smtp", "--ca", dir.appendingPathComponent("smtp-ca.pem").path,
                                      "--user", "relay", "--password", "s3cret pass"])
        defer { secure.stop() }
        let port = secure.port, ca = secure.info["ca"] as? String
        server = try TestServer(conninfo: fixture.conninfo) {
            $0.reach.smtpURL = "smtp://relay:s3cret%20pass@127.0.0.1:\(port)"
            $0.reach.emailFrom = "staffcast@example.org"
            $0.reach.emailAfterSeconds = 1
            $0.reach.caFile = ca
        }
        let m = try server.api(fixture.ownerToken).sendMessage(event: fixture.event, message: "Fire at stage 2", type: "alert",
                                                               priority: "urgent", expiresInMinutes: nil)
        let mails = secure.wait(for: 2) { ($0["data"] as? String)?.contains("Fire at stage 2") == true }
        XCTAssertEqual(Set(mails.flatMap { $0["rcpt_tos"] as? [String] ?? [] }), ["sam@example.org", "li@example.org"])
        XCTAssertTrue(mails.allSatisfy { $0["tls"] as? Bool == true && $0["authenticated"] as? Bool == true }, "\(mails)")
        XCTAssertTrue(try waitUntil(10) {
            try fixture.count("SELECT count(*) FROM message_reach WHERE message_id = $1 AND via = 'email'", [id(m.id)]) == 2
        })
    }

    func testEmailAddressesAreCheckedAndSetByTheCommandLineStore() throws {
        XCTAssertThrowsError(try fixture.store.setEmail(user: fixture.staff, email: "not an address"))
        XCTAssertThrowsError(try fixture.store.setEmail(user: fixture.staff, email: "a@b\r\nBcc: x@y.z"))
        try fixture.store.setEmail(user: fixture.staff, email: " sam@festival.example ")
        XCTAssertEqual(try fixture.store.email(user: fixture.staff), "sam@festival.example")
        try fixture.store.setEmail(user: fixture.staff, email: "")
        XCTAssertNil(try fixture.store.email(user: fixture.staff))
        XCTAssertThrowsError(try fixture.store.setEmail(user: UUID(), email: "x@y.z"))
    }

    /// An emergency pasted as one line of 3,000 bytes is emailed: the body is quoted-printable
    /// in lines of at most 76 characters (aiosmtpd refuses a line over 998 with "Line too long",
    /// and with 8bit every such email failed for good). A refusal keeps the SMTP server's reason.
    func testALongLineIsEmailedAndARefusalKeepsTheServersReason() throws {
        let (nobody, _) = try fixture.person("Nobody Here", email: "nobody@example.org")
        let text = String(repeating: "Evacuate hall B by exit 4, walk = do not run. ", count: 65)
        XCTAssertGreaterThan(text.utf8.count, 2_900)
        let m = try server.api(fixture.ownerToken).sendMessage(event: fixture.event, message: text, type: "emergency",
                                                               priority: "urgent", expiresInMinutes: nil)
        let mails = smtp.wait(for: 2) { ($0["rcpt_tos"] as? [String])?.first?.hasSuffix("@example.org") == true }
        XCTAssertEqual(Set(mails.flatMap { $0["rcpt_tos"] as? [String] ?? [] }), ["sam@example.org", "li@example.org"])
        for mail in mails {
            let data = mail["data"] as? String ?? ""
            XCTAssertTrue(data.contains("Content-Transfer-Encoding: quoted-printable"), data)
            XCTAssertTrue(data.components(separatedBy: "\r\n").allSatisfy { $0.utf8.count <= 998 }, "no line over 998")
            XCTAssertTrue(EmailTextTests.decodeQuotedPrintable(data).contains(text), "the text arrives whole")
        }
        XCTAssertTrue(try waitUntil(10) {
            try fixture.count("SELECT count(*) FROM message_reach WHERE message_id = $1 AND via = 'email'", [id(m.id)]) == 2
        })
        XCTAssertTrue(try waitUntil(10) {
            try fixture.count("""
                SELECT count(*) FROM outbox WHERE kind = 'email' AND user_id = $1 AND status = 'failed'
                  AND last_error LIKE '%No such mailbox here%'
                """, [id(nobody)]) == 1
        }, "the refusal (550) is final and keeps the server's reply: "
           + ((try? fixture.store.conn.query("SELECT status || ' ' || coalesce(last_error, '-') FROM outbox WHERE kind = 'email' AND user_id = $1",
                                              [id(nobody)]).string(0, 0)) ?? "no row"))
    }

    /// A graceful stop while the SMTP server takes 6 s to answer (found by an attack: every
    /// email in flight was sent again 5 min later, when its lease ran out): the email in flight
    /// finishes and its outcome is recorded before the server ends; what had not started is
    /// given back at once.
    func testAGracefulStopLetsAnEmailInFlightFinishAndRecordsIt() throws {
        server.stop()
        let slow = try Counterpart(["smtp", "--slow", "6"])
        defer { slow.stop() }
        let port = slow.port
        server = try TestServer(conninfo: fixture.conninfo) {
            $0.reach.smtpURL = "smtp://127.0.0.1:\(port)"
            $0.reach.emailFrom = "staffcast@example.org"
            $0.reach.emailAfterSeconds = 1
        }
        let m = try server.api(fixture.ownerToken).sendMessage(event: fixture.event, message: "Fire at stage 2", type: "emergency",
                                                               priority: "urgent", expiresInMinutes: nil)
        slow.wait { $0["data_started"] != nil }
        server.stop()
        let started = slow.requests.filter { $0["data_started"] != nil }.count
        XCTAssertEqual(try fixture.count("SELECT count(*) FROM outbox WHERE kind = 'email' AND message_id = $1 AND status = 'done'",
                                         [id(m.id)]), started, "each email in flight was recorded as sent")
        XCTAssertEqual(try fixture.count("""
            SELECT count(*) FROM outbox WHERE kind = 'email' AND message_id = $1 AND status = 'pending' AND lease_until > now()
            """, [id(m.id)]), 0, "nothing is left leased to the stopped server")
    }

    /// Someone emailed an emergency that is then corrected gets a short `[Corrected]` email
    /// with the new text, and a `[Withdrawn]` one when it is retracted (sql/021); someone who
    /// read it in time, and so was never emailed, gets neither.
    func testACorrectionFollowsTheEmailToWhoeverGotIt() throws {
        let api = try server.api(fixture.ownerToken)
        let emergency = try api.sendMessage(event: fixture.event, message: "Evacuate hall B", type: "emergency",
                                            priority: "urgent", expiresInMinutes: nil)
        _ = try fixture.store.markRead(as: li, message: emergency.id) // before email_after_seconds
        smtp.wait { ($0["rcpt_tos"] as? [String]) == ["sam@example.org"] }

        _ = try api.editMessage(emergency.id, text: "Evacuate hall C")
        let corrected = smtp.wait(for: 2) { ($0["rcpt_tos"] as? [String]) == ["sam@example.org"] }.last?["data"] as? String ?? ""
        XCTAssertTrue(corrected.contains("Subject: [Corrected] Summer Festival: Evacuate hall C"), corrected)
        XCTAssertTrue(corrected.contains("was corrected"), corrected)
        try api.retractMessage(emergency.id)
        let withdrawn = smtp.wait(for: 3) { ($0["rcpt_tos"] as? [String]) == ["sam@example.org"] }.last?["data"] as? String ?? ""
        XCTAssertTrue(withdrawn.contains("Subject: [Withdrawn] Summer Festival: Evacuate hall C"), withdrawn)
        Thread.sleep(forTimeInterval: 2)
        XCTAssertFalse(smtp.requests.contains { ($0["rcpt_tos"] as? [String]) == ["li@example.org"] }, "Li read it in time: no email at all")
        XCTAssertEqual(smtp.requests.filter { ($0["rcpt_tos"] as? [String]) == ["sam@example.org"] }.count, 3)
    }
}
