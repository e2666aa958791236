import Foundation
import StaffcastCore
import XCTest

/// The pure parts of emergencies: escalation defaults and decisions, reach, the new frames.
final class EmergencyPolicyTests: XCTestCase {
    let event = UUID()

    func request(_ type: String, escalate: Int? = nil) throws -> SendRequest {
        try SendRequest(eventID: event, message: "Evacuate hall B", messageType: type, escalateAfterMinutes: escalate)
    }

    func testEmergenciesEscalateByDefaultOthersOnlyWhenAsked() throws {
        let policy = EscalationPolicy()
        XCTAssertEqual(policy.applyingDefault(to: try request("emergency")).escalateAfterMinutes, 5)
        XCTAssertEqual(policy.applyingDefault(to: try request("emergency", escalate: 12)).escalateAfterMinutes, 12)
        XCTAssertNil(policy.applyingDefault(to: try request("alert")).escalateAfterMinutes)
        XCTAssertEqual(policy.applyingDefault(to: try request("broadcast", escalate: 1)).escalateAfterMinutes, 1)
        var off = EscalationPolicy()
        off.emergencyDefaultMinutes = nil
        XCTAssertNil(off.applyingDefault(to: try request("emergency")).escalateAfterMinutes)
        XCTAssertEqual(policy.intervalSeconds(minutes: 5), 300)
        var fast = EscalationPolicy()
        fast.intervalSecondsOverride = 2
        XCTAssertEqual(fast.intervalSeconds(minutes: 5), 2)
    }

    func testEscalateAfterMinutesIsValidated() {
        for bad in [0, -1, 1_441] {
            XCTAssertThrowsError(try request("emergency", escalate: bad)) { error in
                XCTAssertEqual((error as? StaffcastError)?.code, .invalid)
                XCTAssertTrue((error as? StaffcastError)?.message.contains("escalate_after_minutes") == true)
            }
        }
        let frame = ClientFrameDecoder.decode(Array(#"{"op":"send","event_id":"\#(event.uuidString)","message":"x","escalate_after_minutes":3}"#.utf8))
        guard case .success(let f) = frame, case .send(let r) = f.request else { return XCTFail("\(frame)") }
        XCTAssertEqual(r.escalateAfterMinutes, 3)
        let wrong = ClientFrameDecoder.decode(Array(#"{"op":"send","event_id":"\#(event.uuidString)","message":"x","escalate_after_minutes":"3"}"#.utf8))
        guard case .failure(let e) = wrong else { return XCTFail() }
        XCTAssertEqual(e.error.code, .invalid)
    }

    func testDecisions() {
        let policy = EscalationPolicy()
        let a = UUID(), b = UUID()
        XCTAssertEqual(policy.decide(roundsDone: 0, unread: [a, b], expired: false, retracted: false), .round(1, unread: [a, b], last: false))
        XCTAssertEqual(policy.decide(roundsDone: 2, unread: [a], expired: false, retracted: false), .round(3, unread: [a], last: true))
        XCTAssertEqual(policy.decide(roundsDone: 3, unread: [a], expired: false, retracted: false), .finish(reason: "max_rounds"))
        XCTAssertEqual(policy.decide(roundsDone: 1, unread: [], expired: false, retracted: false), .finish(reason: "all_read"))
        XCTAssertEqual(policy.decide(roundsDone: 0, unread: [a], expired: true, retracted: false), .finish(reason: "expired"))
        XCTAssertEqual(policy.decide(roundsDone: 0, unread: [a], expired: false, retracted: true), .finish(reason: "retracted"))
    }

    func testReachAndTheDeliveryLine() {
        let olivia = UUID(), sam = UUID(), ana = UUID(), li = UUID(), zoe = UUID()
        let t = Date(timeIntervalSince1970: 1_800_000_000)
        let reach = Reach.compute(eventID: event,
                                  roster: [(olivia, "Olivia"), (sam, "Sam (gate 3)"), (ana, "Ana"), (li, "Li"), (zoe, "Zoe")],
                                  connected: [zoe, olivia, UUID()], // someone no longer on the roster counts for nothing
                                  lastSeen: [sam: t, li: t.addingTimeInterval(60)])
        XCTAssertEqual(reach.roster, 5)
        XCTAssertEqual(reach.connected, 2)
        XCTAssertEqual(reach.offline.map(\.displayName), ["Ana", "Sam (gate 3)", "Li"], "never seen, then longest gone")
        XCTAssertEqual(reach.deliveryLine(excluding: olivia), "delivered live to 1 of 4 recipients; not connected: Ana, Sam (gate 3), Li")
        XCTAssertEqual(reach.deliveryLine(excluding: olivia, maxNames: 2),
                       "delivered live to 1 of 4 recipients; not connected: Ana, Sam (gate 3) and 1 more")
        let all = Reach.compute(eventID: event, roster: [(olivia, "Olivia"), (sam, "Sam")], connected: [sam], lastSeen: [:])
        XCTAssertEqual(all.deliveryLine(excluding: olivia), "delivered live to 1 of 1 recipients")
        // JSON round trip with the contract's names.
        let data = try! JSONEncoder().encode(reach)
        let object = try! JSONSerialization.jsonObject(with: data) as! [String: Any]
        XCTAssertEqual(Set(object.keys), ["event_id", "roster", "connected", "offline", "online", "zones"])
        XCTAssertEqual(try JSONDecoder().decode(Reach.self, from: data), reach)
    }

    func testReceiptAndReminderFramesRoundTrip() throws {
        let r = ReadReceipt(messageID: UUID(), eventID: event, userID: UUID(), displayName: "Sam", readCount: 3)
        let receipt = ServerFrame.receipt(r)
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(receipt.encoded())) as? [String: Any])
        XCTAssertEqual(Set(object.keys), ["op", "message_id", "event_id", "user_id", "display_name", "read_count"])
        XCTAssertEqual(object["op"] as? String, "receipt")
        XCTAssertEqual(try ServerFrame.decode(receipt.encoded()), receipt)
        let m = StaffMessage(id: UUID(), seq: 4, eventID: event, senderID: UUID(), senderName: "Olivia", message: "Evacuate",
                             messageType: .emergency, priority: .urgent, sentAt: Date(timeIntervalSince1970: 1_800_000_000),
                             expiresAt: nil, read: false, readCount: 0, escalateAfterMinutes: 5)
        let marked = ServerFrame.markedRead(eventID: event, messageIDs: [r.messageID, UUID()])
        let markedObject = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(marked.encoded())) as? [String: Any])
        XCTAssertEqual(Set(markedObject.keys), ["op", "event_id", "message_ids"])
        XCTAssertEqual(markedObject["op"] as? String, "marked_read")
        XCTAssertEqual(try ServerFrame.decode(marked.encoded()), marked)
        let reminder = ServerFrame.reminder(message: m, round: 2)
        XCTAssertEqual(try ServerFrame.decode(reminder.encoded()), reminder)
        let text = String(decoding: reminder.encoded(), as: UTF8.self)
        XCTAssertTrue(text.contains(#""round":2"#) && text.contains(#""escalate_after_minutes":5"#), text)
        // A message without escalation says null, not nothing.
        var plain = m
        plain.escalateAfterMinutes = nil
        XCTAssertTrue(String(decoding: ServerFrame.message(plain).encoded(), as: UTF8.self).contains(#""escalate_after_minutes":null"#))
    }
}
