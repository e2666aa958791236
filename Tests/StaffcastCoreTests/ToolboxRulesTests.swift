import Foundation
import StaffcastCore
import XCTest

/// The pure rules of the organiser's toolbox (docs/protocol.md): lead times, scheduling time
/// checks, search filters, and the `send` fields that carry them.
final class ToolboxRulesTests: XCTestCase {
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    func testLeadTimesParse() throws {
        XCTAssertEqual(try LeadTime(parsing: "1d").seconds, 86_400)
        XCTAssertEqual(try LeadTime(parsing: "2h").seconds, 7_200)
        XCTAssertEqual(try LeadTime(parsing: "30m").seconds, 1_800)
        XCTAssertEqual(try LeadTime(parsing: " 45M ").description, "45m")
        for bad in ["", "d", "0h", "-2h", "2", "2s", "2 h", "1.5h", "h2", "367d", "abc"] {
            XCTAssertThrowsError(try LeadTime(parsing: bad), bad) { e in
                XCTAssertEqual((e as? StaffcastError)?.code, .invalid, bad)
            }
        }
    }

    func testLeadTimeListIsLongestFirstAndEachOnce() throws {
        XCTAssertEqual(try LeadTime.parseList("30m,1d,2h").map(\.description), ["1d", "2h", "30m"])
        XCTAssertThrowsError(try LeadTime.parseList("2h,120m")) // the same time twice
        XCTAssertThrowsError(try LeadTime.parseList("1d,,2h"))
        XCTAssertThrowsError(try LeadTime.parseList(""))
    }

    func testScheduleFromFields() throws {
        XCTAssertNil(try SendSchedule.from(sendAt: nil, beforeStart: nil))
        XCTAssertEqual(try SendSchedule.from(sendAt: "2027-01-15T08:00:00Z", beforeStart: nil),
                       .at(RFC3339.parse("2027-01-15T08:00:00Z")!))
        XCTAssertEqual(try SendSchedule.from(sendAt: nil, beforeStart: "2h"), .beforeStart(LeadTime(amount: 2, unit: .hours)))
        XCTAssertThrowsError(try SendSchedule.from(sendAt: "2027-01-15T08:00:00Z", beforeStart: "2h"))
        XCTAssertThrowsError(try SendSchedule.from(sendAt: "tomorrow", beforeStart: nil)) { e in
            XCTAssertTrue((e as? StaffcastError)?.message.contains("RFC 3339") ?? false)
        }
    }

    func testResolveRefusesThePastAndAMissingStart() throws {
        let inAnHour = now.addingTimeInterval(3_600)
        XCTAssertEqual(try SendSchedule.at(inAnHour).resolve(eventStartsAt: nil, now: now), inAnHour)
        XCTAssertThrowsError(try SendSchedule.at(now.addingTimeInterval(-1)).resolve(eventStartsAt: nil, now: now)) { e in
            XCTAssertTrue((e as? StaffcastError)?.message.contains("already passed") ?? false)
        }
        XCTAssertThrowsError(try SendSchedule.at(now).resolve(eventStartsAt: nil, now: now))
        let start = now.addingTimeInterval(2 * 86_400)
        let twoHours = SendSchedule.beforeStart(LeadTime(amount: 2, unit: .hours))
        XCTAssertEqual(try twoHours.resolve(eventStartsAt: start, now: now), start.addingTimeInterval(-7_200))
        XCTAssertThrowsError(try twoHours.resolve(eventStartsAt: nil, now: now)) { e in
            XCTAssertEqual((e as? StaffcastError)?.code, .invalid)
            XCTAssertTrue((e as? StaffcastError)?.message.contains("start time") ?? false)
        }
        // Three days before a start two days away has passed.
        XCTAssertThrowsError(try SendSchedule.beforeStart(LeadTime(amount: 3, unit: .days)).resolve(eventStartsAt: start, now: now))
        // More than a year ahead is refused.
        XCTAssertThrowsError(try SendSchedule.at(now.addingTimeInterval(400 * 86_400)).resolve(eventStartsAt: nil, now: now))
    }

    func testLateAfterAMinute() {
        XCTAssertFalse(SendSchedule.isLate(sendAt: now, sentAt: now.addingTimeInterval(59)))
        XCTAssertTrue(SendSchedule.isLate(sendAt: now, sentAt: now.addingTimeInterval(61)))
    }

    func testSearchFiltersValidate() throws {
        XCTAssertFalse(MessageSearch.isSearch(["since_seq": "3", "limit": "5"]))
        XCTAssertTrue(MessageSearch.isSearch(["q": "gate"]))
        let s = try MessageSearch(query: ["q": "50%_off", "type": "alert", "priority": "high", "sender": "Olivia",
                                          "from": "2026-06-01T00:00:00Z", "to": "2026-06-02T00:00:00Z",
                                          "include_expired": "true", "limit": "20"])
        XCTAssertEqual(s.likePattern, "%50\\%\\_off%")
        XCTAssertEqual(s.messageType, .alert)
        XCTAssertEqual(s.priority, .high)
        XCTAssertTrue(s.includeExpired)
        XCTAssertEqual(s.limit, 20)
        for bad: [String: String] in [["type": "gossip"], ["priority": "extreme"], ["from": "yesterday"],
                                       ["from": "2026-06-02T00:00:00Z", "to": "2026-06-01T00:00:00Z"],
                                       ["include_expired": "maybe"], ["limit": "0"], ["limit": "201"], ["q": "a\u{0}b"]] {
            XCTAssertThrowsError(try MessageSearch(query: bad), "\(bad)") { e in
                XCTAssertEqual((e as? StaffcastError)?.code, .invalid)
            }
        }
    }

    func testSendCarriesScheduleAndForce() throws {
        let id = UUID()
        let text = #"{"op":"send","event_id":"\#(id.uuidString)","message":"Doors","before_start":"30m","force":true}"#
        guard case .success(let frame) = ClientFrameDecoder.decode(Array(text.utf8)), case .send(let send) = frame.request else {
            return XCTFail("not decoded")
        }
        XCTAssertEqual(send.schedule, .beforeStart(LeadTime(amount: 30, unit: .minutes)))
        XCTAssertTrue(send.force)
        for bad in [#""force":1"#, #""force":"yes""#, #""send_at":"soon""#, #""before_start":"2x""#,
                    #""send_at":"2027-01-01T00:00:00Z","before_start":"2h""#] {
            let t = #"{"op":"send","event_id":"\#(id.uuidString)","message":"x",\#(bad)}"#
            guard case .failure(let e) = ClientFrameDecoder.decode(Array(t.utf8)) else { return XCTFail("accepted \(bad)") }
            XCTAssertEqual(e.error.code, .invalid, bad)
        }
    }

    func testScheduledFrameRoundTrips() throws {
        let s = ScheduledMessage(id: UUID(), eventID: UUID(), senderID: UUID(), message: "Doors open", messageType: .alert,
                                 priority: .high, expiresInMinutes: nil, sendAt: now, status: .pending, messageID: nil, late: false)
        let bytes = ServerFrame.scheduled(ref: "r1", scheduled: s).encoded()
        let object = try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any]
        XCTAssertEqual(object?["op"] as? String, "scheduled")
        let inner = object?["scheduled"] as? [String: Any]
        for key in ["id", "event_id", "message", "message_type", "priority", "expires_in_minutes", "send_at", "status", "message_id"] {
            XCTAssertNotNil(inner?[key], key)
        }
        XCTAssertEqual(try ServerFrame.decode(bytes), .scheduled(ref: "r1", scheduled: s))
        XCTAssertEqual(ErrorCode.conflict.httpStatus, 409)
    }
}

/// Reply rules and the audience of live replies (pure).
final class ReplyRulesTests: XCTestCase {
    func testReplyRequestValidates() throws {
        let id = UUID()
        XCTAssertEqual(try ReplyRequest(messageID: id, status: "on_my_way", text: nil).status, .onMyWay)
        XCTAssertNil(try ReplyRequest(messageID: id, status: "done", text: "   ").text, "a blank note is no note")
        XCTAssertEqual(try ReplyRequest(messageID: id, status: "custom", text: "At gate 2").text, "At gate 2")
        XCTAssertNoThrow(try ReplyRequest(messageID: id, status: "custom", text: String(repeating: "x", count: 280)))
        let cases: [(String, String?, ErrorCode)] = [
            ("custom", nil, .invalid), ("custom", " ", .invalid), ("late", nil, .invalid),
            ("custom", String(repeating: "x", count: 281), .tooLarge), ("done", "a\u{0}b", .invalid), ("custom", "a\u{1B}[2J", .invalid),
        ]
        for (status, text, code) in cases {
            XCTAssertThrowsError(try ReplyRequest(messageID: id, status: status, text: text), "\(status) \(text ?? "nil")") { e in
                XCTAssertEqual((e as? StaffcastError)?.code, code)
            }
        }
    }

    func testReplyFrameHasEveryContractField() throws {
        let r = Reply(messageID: UUID(), eventID: UUID(), userID: UUID(), displayName: "Sam", status: .runningLate, text: nil,
                      repliedAt: Date(timeIntervalSince1970: 1_800_000_000))
        for frame in [ServerFrame.reply(r), .replied(ref: "x", reply: r)] {
            let object = try JSONSerialization.jsonObject(with: Data(frame.encoded())) as? [String: Any]
            let inner = try XCTUnwrap(object?["reply"] as? [String: Any])
            XCTAssertEqual(Set(inner.keys), ["message_id", "event_id", "user_id", "display_name", "status", "text", "replied_at"])
            XCTAssertEqual(try ServerFrame.decode(frame.encoded()), frame)
        }
    }
}

/// Sends by template and template names (pure).
final class TemplateRulesTests: XCTestCase {
    func testByTemplateKeepsOnlyTheGivenOverrides() throws {
        let event = UUID()
        let plain = try SendRequest.byTemplate(eventID: event, name: "gates-open")
        XCTAssertEqual(plain.template, TemplateUse(name: "gates-open"))
        let over = try SendRequest.byTemplate(eventID: event, name: "gates-open", priority: "urgent", expiresInMinutes: 5)
        XCTAssertEqual(over.template, TemplateUse(name: "gates-open", priority: .urgent, expiresInMinutes: 5))
        let template = MessageTemplate(eventID: event, name: "gates-open", message: "Gates are open", messageType: .alert,
                                       priority: .high, expiresInMinutes: 60, createdAt: Date())
        let resolved = over.template!.resolve(template, into: over)
        XCTAssertEqual(resolved.message, "Gates are open")
        XCTAssertEqual(resolved.messageType, .alert)
        XCTAssertEqual(resolved.priority, .urgent)
        XCTAssertEqual(resolved.expiresInMinutes, 5)
        XCTAssertNil(resolved.template)
        XCTAssertThrowsError(try SendRequest.byTemplate(eventID: event, name: "x", priority: "extreme"))
        XCTAssertThrowsError(try SendRequest.byTemplate(eventID: event, name: "x", expiresInMinutes: 0))
    }

    func testTemplateNames() {
        for good in ["gates-open", "Lunch time", "día 2"] { XCTAssertNoThrow(try MessageTemplate.validateName(good), good) }
        for bad in ["", " lead", "trail ", "a/b", "two\nlines", "tab\there", String(repeating: "x", count: 101), "nul\u{0}"] {
            XCTAssertThrowsError(try MessageTemplate.validateName(bad), bad)
        }
    }
}
