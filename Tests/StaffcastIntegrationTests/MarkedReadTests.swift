import Foundation
import StaffcastCore
import XCTest

/// A person with two devices (the phone app and a scanner's terminal, on two servers of one
/// database) reads an emergency on one: the other is told (`marked_read`) and stops counting
/// and ringing for it. Nobody else is told what they read.
final class MarkedReadTests: IntegrationTestCase {
    func testAReadOnOneDeviceReachesTheOtherOnAnotherServer() throws {
        let a = try startServer(), b = try startServer()
        let phone = try a.subscriber(fixture.staffToken, fixture.event)
        let terminal = try b.subscriber(fixture.staffToken, fixture.event)
        let admin = try b.subscriber(fixture.adminToken, fixture.event)
        let sender = try a.connect(fixture.ownerToken)
        let event = fixture.event.uuidString.lowercased()
        try sender.send(["op": "send", "event_id": event, "message": "Evacuate hall B", "message_type": "emergency",
                         "priority": "urgent", "ref": "e"])
        guard case .sent(_, let sent) = try sender.expect("sent") else { return XCTFail("not sent") }
        for socket in [phone, terminal, admin] { _ = try socket.expect("message", timeout: 10) }

        try phone.send(["op": "mark_read", "message_id": sent.id.uuidString.lowercased(), "ref": "r"])
        guard case .read(_, let id, _, let unread, _) = try phone.expect("read", timeout: 10) else { return XCTFail("no read reply") }
        XCTAssertEqual(id, sent.id)
        XCTAssertEqual(unread, 0)
        guard case .markedRead(let markedEvent, let ids) = try terminal.expect("marked_read", timeout: 10) else {
            return XCTFail("the terminal was not told")
        }
        XCTAssertEqual(markedEvent, fixture.event)
        XCTAssertEqual(ids, [sent.id])
        _ = try admin.expect("receipt", timeout: 10)
        try admin.expectSilence(1.5) // the admin gets the receipt, not the reader's own notice
        // The terminal's own view from a fresh subscribe agrees: nothing unread.
        XCTAssertEqual(try b.connect(fixture.staffToken).subscribe(fixture.event).unread, 0)
    }
}
