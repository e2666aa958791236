import Foundation
import StaffcastCore
import XCTest

/// The exact bytes JSONEncoder writes for the wire models (docs/protocol.md): key order, nulls
/// for absent optionals, lowercase ids, RFC 3339 times. Pinned so that a change in how they are
/// encoded (one codec for all of them) cannot change what clients read.
final class WireModelBytesTests: XCTestCase {
    let id1 = UUID(uuidString: "6F2C1D8E-0B3A-4C5D-9E7F-1A2B3C4D5E6F")!
    let id2 = UUID(uuidString: "00000000-0000-4000-8000-00000000000A")!
    let id3 = UUID(uuidString: "FFFFFFFF-EEEE-4DDD-8CCC-BBBBBBBBBBBB")!
    let t1 = Date(timeIntervalSince1970: 1_800_000_000.125)
    let t2 = Date(timeIntervalSince1970: 1_800_003_600)

    func text<T: Encodable>(_ value: T) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys] // JSONEncoder's own key order changes from run to run
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    func message(full: Bool) throws -> StaffMessage {
        var m = StaffMessage(id: id1, seq: 42, eventID: id2, senderID: id3, senderName: "Olivia", message: "Gates \"open\"",
                             messageType: .alert, priority: .high, sentAt: t1, expiresAt: full ? t2 : nil,
                             read: full, readCount: 3, escalateAfterMinutes: full ? 5 : nil)
        if full {
            m.editedAt = t2
            m.teams = ["Gate A", "Medics"]
            m.poll = try Poll(options: ["Yes", "No"])
            m.answer = 1
        }
        return m
    }

    func notification(full: Bool) -> StaffNotification {
        StaffNotification(id: id1, userID: id2, type: "invite", title: "Hi", message: "Welcome",
                          data: full ? .object(["n": .number(1)]) : nil, read: full, readAt: full ? t2 : nil, createdAt: t1)
    }

    func template(full: Bool) -> MessageTemplate {
        var t = MessageTemplate(eventID: id2, name: "Doors", message: "Doors open", messageType: .broadcast, priority: .normal,
                                expiresInMinutes: full ? 30 : nil, createdAt: t1)
        if full { t.teams = ["Bar"] }
        return t
    }

    func reply(full: Bool) -> Reply {
        Reply(messageID: id1, eventID: id2, userID: id3, displayName: "Sam", status: full ? .custom : .done,
              text: full ? "10 min" : nil, repliedAt: t1)
    }

    func scheduled(full: Bool) -> ScheduledMessage {
        var s = ScheduledMessage(id: id1, eventID: id2, senderID: id3, message: "Soon", messageType: .broadcast, priority: .low,
                                 expiresInMinutes: full ? 60 : nil, sendAt: t2, status: full ? .cancelled : .pending,
                                 messageID: full ? id1 : nil, late: full, note: full ? "access ended" : nil)
        if full { s.teams = ["Gate A"] }
        return s
    }

    func testTheBytesAreThePinnedOnes() throws {
        let got = [
            try text(message(full: false)), try text(message(full: true)),
            try text(notification(full: false)), try text(notification(full: true)),
            try text(template(full: false)), try text(template(full: true)),
            try text(reply(full: false)), try text(reply(full: true)),
            try text(scheduled(full: false)), try text(scheduled(full: true)),
        ]
        for (i, (g, e)) in zip(got, Self.expected).enumerated() { XCTAssertEqual(g, e, "#\(i)") }
        XCTAssertEqual(got.count, Self.expected.count, got.joined(separator: "\n"))
    }

    /// Absent optionals, `teams` and `late` read as nil, [] and false; `null` the same; a bad time,
    /// id or status, or a missing required key, is refused.
    func testWhatIsReadIsWhatWasRead() throws {
        let cases: [(any Codable.Type, String, String?)] = [
            (StaffMessage.self, #"{"id":"6f2c1d8e-0b3a-4c5d-9e7f-1a2b3c4d5e6f","seq":1,"event_id":"6F2C1D8E-0B3A-4C5D-9E7F-1A2B3C4D5E6F","sender_id":"6f2c1d8e-0b3a-4c5d-9e7f-1a2b3c4d5e6f","sender_name":"a","message":"m","message_type":"alert","priority":"low","sent_at":"2026-01-01T00:00:00Z","read":false,"read_count":0}"#, #"{"answer":null,"edited_at":null,"escalate_after_minutes":null,"event_id":"6f2c1d8e-0b3a-4c5d-9e7f-1a2b3c4d5e6f","expires_at":null,"id":"6f2c1d8e-0b3a-4c5d-9e7f-1a2b3c4d5e6f","message":"m","message_type":"alert","poll":null,"priority":"low","read":false,"read_count":0,"sender_id":"6f2c1d8e-0b3a-4c5d-9e7f-1a2b3c4d5e6f","sender_name":"a","sent_at":"2026-01-01T00:00:00.000Z","seq":1,"teams":[]}"#),
            (StaffMessage.self, #"{"id":"6f2c1d8e-0b3a-4c5d-9e7f-1a2b3c4d5e6f","seq":1,"event_id":"6F2C1D8E-0B3A-4C5D-9E7F-1A2B3C4D5E6F","sender_id":"6f2c1d8e-0b3a-4c5d-9e7f-1a2b3c4d5e6f","sender_name":"a","message":"m","message_type":"alert","priority":"low","sent_at":"2026-01-01T00:00:00Z","read":false,"read_count":0,"expires_at":null,"escalate_after_minutes":null,"edited_at":null,"teams":null,"poll":null,"answer":null}"#, #"{"answer":null,"edited_at":null,"escalate_after_minutes":null,"event_id":"6f2c1d8e-0b3a-4c5d-9e7f-1a2b3c4d5e6f","expires_at":null,"id":"6f2c1d8e-0b3a-4c5d-9e7f-1a2b3c4d5e6f","message":"m","message_type":"alert","poll":null,"priority":"low","read":false,"read_count":0,"sender_id":"6f2c1d8e-0b3a-4c5d-9e7f-1a2b3c4d5e6f","sender_name":"a","sent_at":"2026-01-01T00:00:00.000Z","seq":1,"teams":[]}"#),
            (StaffMessage.self, #"{"id":"6f2c1d8e-0b3a-4c5d-9e7f-1a2b3c4d5e6f","seq":1,"event_id":"6F2C1D8E-0B3A-4C5D-9E7F-1A2B3C4D5E6F","sender_id":"6f2c1d8e-0b3a-4c5d-9e7f-1a2b3c4d5e6f","sender_name":"a","message":"m","message_type":"alert","priority":"low","sent_at":"2026-01-01T00:00:00Z","read":false,"read_count":0,"expires_at":"bad"}"#, nil),
            (StaffMessage.self, #"{"id":"6f2c1d8e-0b3a-4c5d-9e7f-1a2b3c4d5e6f","seq":1}"#, nil),
            (StaffNotification.self, #"{"id":"6f2c1d8e-0b3a-4c5d-9e7f-1a2b3c4d5e6f","user_id":"6f2c1d8e-0b3a-4c5d-9e7f-1a2b3c4d5e6f","type":"t","title":"x","message":"m","read":true,"created_at":"2026-01-01T00:00:00.5Z"}"#, #"{"created_at":"2026-01-01T00:00:00.500Z","data":null,"id":"6f2c1d8e-0b3a-4c5d-9e7f-1a2b3c4d5e6f","message":"m","read":true,"read_at":null,"title":"x","type":"t","user_id":"6f2c1d8e-0b3a-4c5d-9e7f-1a2b3c4d5e6f"}"#),
            (StaffNotification.self, #"{"id":"6f2c1d8e-0b3a-4c5d-9e7f-1a2b3c4d5e6f","user_id":"6f2c1d8e-0b3a-4c5d-9e7f-1a2b3c4d5e6f","type":"t","title":"x","message":"m","read":true,"created_at":"2026-01-01T00:00:00.5Z","data":null,"read_at":null}"#, #"{"created_at":"2026-01-01T00:00:00.500Z","data":null,"id":"6f2c1d8e-0b3a-4c5d-9e7f-1a2b3c4d5e6f","message":"m","read":true,"read_at":null,"title":"x","type":"t","user_id":"6f2c1d8e-0b3a-4c5d-9e7f-1a2b3c4d5e6f"}"#),
            (MessageTemplate.self, #"{"event_id":"6f2c1d8e-0b3a-4c5d-9e7f-1a2b3c4d5e6f","name":"n","message":"m","message_type":"broadcast","priority":"normal","created_at":"2026-01-01T00:00:00Z"}"#, #"{"created_at":"2026-01-01T00:00:00.000Z","event_id":"6f2c1d8e-0b3a-4c5d-9e7f-1a2b3c4d5e6f","expires_in_minutes":null,"message":"m","message_type":"broadcast","name":"n","priority":"normal","teams":[]}"#),
            (MessageTemplate.self, #"{"event_id":"6f2c1d8e-0b3a-4c5d-9e7f-1a2b3c4d5e6f","name":"n","message":"m","message_type":"broadcast","priority":"normal","created_at":"2026-01-01T00:00:00Z","expires_in_minutes":null,"teams":null}"#, #"{"created_at":"2026-01-01T00:00:00.000Z","event_id":"6f2c1d8e-0b3a-4c5d-9e7f-1a2b3c4d5e6f","expires_in_minutes":null,"message":"m","message_type":"broadcast","name":"n","priority":"normal","teams":[]}"#),
            (Reply.self, #"{"message_id":"6f2c1d8e-0b3a-4c5d-9e7f-1a2b3c4d5e6f","event_id":"6f2c1d8e-0b3a-4c5d-9e7f-1a2b3c4d5e6f","user_id":"6f2c1d8e-0b3a-4c5d-9e7f-1a2b3c4d5e6f","display_name":"d","status":"on_my_way","replied_at":"2026-01-01T00:00:00Z"}"#, #"{"display_name":"d","event_id":"6f2c1d8e-0b3a-4c5d-9e7f-1a2b3c4d5e6f","message_id":"6f2c1d8e-0b3a-4c5d-9e7f-1a2b3c4d5e6f","replied_at":"2026-01-01T00:00:00.000Z","status":"on_my_way","text":null,"user_id":"6f2c1d8e-0b3a-4c5d-9e7f-1a2b3c4d5e6f"}"#),
            (Reply.self, #"{"message_id":"6f2c1d8e-0b3a-4c5d-9e7f-1a2b3c4d5e6f","event_id":"6f2c1d8e-0b3a-4c5d-9e7f-1a2b3c4d5e6f","user_id":"6f2c1d8e-0b3a-4c5d-9e7f-1a2b3c4d5e6f","display_name":"d","status":"nope","replied_at":"2026-01-01T00:00:00Z"}"#, nil),
            (ScheduledMessage.self, #"{"id":"6f2c1d8e-0b3a-4c5d-9e7f-1a2b3c4d5e6f","event_id":"6f2c1d8e-0b3a-4c5d-9e7f-1a2b3c4d5e6f","sender_id":"6f2c1d8e-0b3a-4c5d-9e7f-1a2b3c4d5e6f","message":"m","message_type":"broadcast","priority":"normal","send_at":"2026-01-01T00:00:00Z","status":"sent"}"#, #"{"event_id":"6f2c1d8e-0b3a-4c5d-9e7f-1a2b3c4d5e6f","expires_in_minutes":null,"id":"6f2c1d8e-0b3a-4c5d-9e7f-1a2b3c4d5e6f","late":false,"message":"m","message_id":null,"message_type":"broadcast","note":null,"priority":"normal","send_at":"2026-01-01T00:00:00.000Z","sender_id":"6f2c1d8e-0b3a-4c5d-9e7f-1a2b3c4d5e6f","status":"sent","teams":[]}"#),
            (ScheduledMessage.self, #"{"id":"6f2c1d8e-0b3a-4c5d-9e7f-1a2b3c4d5e6f","event_id":"6f2c1d8e-0b3a-4c5d-9e7f-1a2b3c4d5e6f","sender_id":"6f2c1d8e-0b3a-4c5d-9e7f-1a2b3c4d5e6f","message":"m","message_type":"broadcast","priority":"normal","send_at":"2026-01-01T00:00:00Z","status":"sent","late":null,"teams":null,"note":null,"message_id":null,"expires_in_minutes":null}"#, #"{"event_id":"6f2c1d8e-0b3a-4c5d-9e7f-1a2b3c4d5e6f","expires_in_minutes":null,"id":"6f2c1d8e-0b3a-4c5d-9e7f-1a2b3c4d5e6f","late":false,"message":"m","message_id":null,"message_type":"broadcast","note":null,"priority":"normal","send_at":"2026-01-01T00:00:00.000Z","sender_id":"6f2c1d8e-0b3a-4c5d-9e7f-1a2b3c4d5e6f","status":"sent","teams":[]}"#),
            (ScheduledMessage.self, #"{"id":"6f2c1d8e-0b3a-4c5d-9e7f-1a2b3c4d5e6f","event_id":"6f2c1d8e-0b3a-4c5d-9e7f-1a2b3c4d5e6f","sender_id":"6f2c1d8e-0b3a-4c5d-9e7f-1a2b3c4d5e6f","message":"m","message_type":"broadcast","priority":"normal","send_at":"2026-01-01T00:00:00Z","status":"sent","message_id":"zz"}"#, nil),
        ]
        for (i, (type, json, expected)) in cases.enumerated() {
            XCTAssertEqual(try reencoded(type, json), expected, "#\(i)")
        }
    }

    /// What `json` reads as, written again; nil when it is refused.
    func reencoded<T: Codable>(_ type: T.Type, _ json: String) throws -> String? {
        guard let value = try? JSONDecoder().decode(T.self, from: Data(json.utf8)) else { return nil }
        return try text(value)
    }

    /// Written by the hand-written `encode(to:)` these types had before they shared one codec.
    static let expected: [String] = [
        #"{"answer":null,"edited_at":null,"escalate_after_minutes":null,"event_id":"00000000-0000-4000-8000-00000000000a","expires_at":null,"id":"6f2c1d8e-0b3a-4c5d-9e7f-1a2b3c4d5e6f","message":"Gates \"open\"","message_type":"alert","poll":null,"priority":"high","read":false,"read_count":3,"sender_id":"ffffffff-eeee-4ddd-8ccc-bbbbbbbbbbbb","sender_name":"Olivia","sent_at":"2027-01-15T08:00:00.125Z","seq":42,"teams":[]}"#,
        #"{"answer":1,"edited_at":"2027-01-15T09:00:00.000Z","escalate_after_minutes":5,"event_id":"00000000-0000-4000-8000-00000000000a","expires_at":"2027-01-15T09:00:00.000Z","id":"6f2c1d8e-0b3a-4c5d-9e7f-1a2b3c4d5e6f","message":"Gates \"open\"","message_type":"alert","poll":{"options":["Yes","No"]},"priority":"high","read":true,"read_count":3,"sender_id":"ffffffff-eeee-4ddd-8ccc-bbbbbbbbbbbb","sender_name":"Olivia","sent_at":"2027-01-15T08:00:00.125Z","seq":42,"teams":["Gate A","Medics"]}"#,
        #"{"created_at":"2027-01-15T08:00:00.125Z","data":null,"id":"6f2c1d8e-0b3a-4c5d-9e7f-1a2b3c4d5e6f","message":"Welcome","read":false,"read_at":null,"title":"Hi","type":"invite","user_id":"00000000-0000-4000-8000-00000000000a"}"#,
        #"{"created_at":"2027-01-15T08:00:00.125Z","data":{"n":1},"id":"6f2c1d8e-0b3a-4c5d-9e7f-1a2b3c4d5e6f","message":"Welcome","read":true,"read_at":"2027-01-15T09:00:00.000Z","title":"Hi","type":"invite","user_id":"00000000-0000-4000-8000-00000000000a"}"#,
        #"{"created_at":"2027-01-15T08:00:00.125Z","event_id":"00000000-0000-4000-8000-00000000000a","expires_in_minutes":null,"message":"Doors open","message_type":"broadcast","name":"Doors","priority":"normal","teams":[]}"#,
        #"{"created_at":"2027-01-15T08:00:00.125Z","event_id":"00000000-0000-4000-8000-00000000000a","expires_in_minutes":30,"message":"Doors open","message_type":"broadcast","name":"Doors","priority":"normal","teams":["Bar"]}"#,
        #"{"display_name":"Sam","event_id":"00000000-0000-4000-8000-00000000000a","message_id":"6f2c1d8e-0b3a-4c5d-9e7f-1a2b3c4d5e6f","replied_at":"2027-01-15T08:00:00.125Z","status":"done","text":null,"user_id":"ffffffff-eeee-4ddd-8ccc-bbbbbbbbbbbb"}"#,
        #"{"display_name":"Sam","event_id":"00000000-0000-4000-8000-00000000000a","message_id":"6f2c1d8e-0b3a-4c5d-9e7f-1a2b3c4d5e6f","replied_at":"2027-01-15T08:00:00.125Z","status":"custom","text":"10 min","user_id":"ffffffff-eeee-4ddd-8ccc-bbbbbbbbbbbb"}"#,
        #"{"event_id":"00000000-0000-4000-8000-00000000000a","expires_in_minutes":null,"id":"6f2c1d8e-0b3a-4c5d-9e7f-1a2b3c4d5e6f","late":false,"message":"Soon","message_id":null,"message_type":"broadcast","note":null,"priority":"low","send_at":"2027-01-15T09:00:00.000Z","sender_id":"ffffffff-eeee-4ddd-8ccc-bbbbbbbbbbbb","status":"pending","teams":[]}"#,
        #"{"event_id":"00000000-0000-4000-8000-00000000000a","expires_in_minutes":60,"id":"6f2c1d8e-0b3a-4c5d-9e7f-1a2b3c4d5e6f","late":true,"message":"Soon","message_id":"6f2c1d8e-0b3a-4c5d-9e7f-1a2b3c4d5e6f","message_type":"broadcast","note":"access ended","priority":"low","send_at":"2027-01-15T09:00:00.000Z","sender_id":"ffffffff-eeee-4ddd-8ccc-bbbbbbbbbbbb","status":"cancelled","teams":["Gate A"]}"#,
    ]
}
