import Foundation
@testable import StaffcastCore
import XCTest

/// The hand-written writers and readers of the hot path say exactly what the Codable
/// definitions say (`hello`, `sent`, `message`, the plain client-frame decoder), and the
/// Codable wire types read back what they write, with errors that name the field.
final class WireCodecTests: XCTestCase {
    let event = UUID()

    func json(_ bytes: [UInt8], file: StaticString = #filePath, line: UInt = #line) throws -> JSONValue {
        try JSONDecoder().decode(JSONValue.self, from: Data(bytes))
    }

    func reference(_ frame: ServerFrame) throws -> JSONValue {
        try JSONDecoder().decode(JSONValue.self, from: JSONEncoder().encode(frame))
    }

    static let names = ["Sam", "", "Zoë \"Z\" \\ 門 \u{1F6A8}", "tab\there\nnew line / slash \u{1}", String(repeating: "é", count: 300)]

    func testHelloBytesAreTheCodableHello() throws {
        let times = [Date(timeIntervalSince1970: 0), Date(timeIntervalSince1970: 1_800_000_000.125), Date(timeIntervalSince1970: 4_102_444_799.999)]
        for (i, name) in Self.names.enumerated() {
            let frame = ServerFrame.hello(user: Identity(userID: UUID(), displayName: name), serverTime: times[i % times.count],
                                          node: Self.names[(i + 2) % Self.names.count])
            XCTAssertEqual(try json(frame.encoded()), try reference(frame), name)
        }
    }

    func messages() throws -> [StaffMessage] {
        let plain = StaffMessage(id: UUID(), seq: 1, eventID: event, senderID: UUID(), senderName: "Olivia",
                                 message: "Gates open", messageType: .broadcast, priority: .normal,
                                 sentAt: Date(timeIntervalSince1970: 1_800_000_000.125), expiresAt: nil, read: false, readCount: 0)
        var full = plain
        full.senderName = Self.names[2]
        full.message = Self.names[3]
        full.messageType = .emergency
        full.priority = .urgent
        full.expiresAt = Date(timeIntervalSince1970: 1_800_003_600.25)
        full.escalateAfterMinutes = 5
        full.editedAt = Date(timeIntervalSince1970: 1_800_000_060.5)
        full.teams = ["Gate A", "Medics \"north\" 門"]
        full.poll = .safety
        full.answer = 1
        var poll = plain
        poll.poll = try Poll(options: ["Yes", "No", "Peut-être ✓"])
        return [plain, full, poll]
    }

    func testSentAndMessageFramesAreTheCodableFrames() throws {
        for m in try messages() {
            for frame in [ServerFrame.message(m), .sent(ref: nil, message: m), .sent(ref: #"r "1" \ é"#, message: m)] {
                XCTAssertEqual(try json(frame.encoded()), try reference(frame), "\(frame)")
            }
        }
    }

    /// Every frame the plain decoder takes, it reads as the Codable decoder does; what it does
    /// not take (escapes, other ops, fractions) it leaves to that decoder.
    func testThePlainDecoderAgreesWithTheCodableOne() throws {
        let id = event.uuidString.lowercased()
        let taken = [
            #"{"op":"subscribe","event_id":"\#(id)"}"#,
            #"{"ref":"r1","op":"subscribe","event_id":"\#(id.uppercased())","since_seq":42}"#,
            #" { "op" : "subscribe" , "event_id" : "\#(id)" , "since_seq" : 0 } "#,
            #"{"op":"ping"}"#, #"{"op":"ping","ref":"x"}"#,
        ]
        for text in taken {
            let plain = try XCTUnwrap(ClientFrameDecoder.decodePlain(Array(text.utf8)), text)
            XCTAssertEqual(plain, try JSONDecoder().decode(ClientFrame.self, from: Data(text.utf8)), text)
        }
        let left = [
            #"{"op":"subscribe","event_id":"\#(id)","ref":"caf\u00e9"}"#, #"{"op":"subscribe","event_id":"\#(id)","ref":"é"}"#,
            #"{"op":"subscribe","event_id":"\#(id)","since_seq":1.0}"#, #"{"op":"mark_read","message_id":"\#(id)"}"#,
            #"{"op":"ping","op":"ping"}"#, #"{"op":"ping","since_seq":1}"#,
        ]
        for text in left {
            XCTAssertNil(ClientFrameDecoder.decodePlain(Array(text.utf8)), text)
            XCTAssertEqual(ClientFrameDecoder.decode(Array(text.utf8)), ClientFrameDecoder.decodeGeneral(Array(text.utf8)), text)
        }
    }

    /// What a client encodes, the server decodes to the same request (both plain and general).
    func testEveryClientFrameRoundTrips() throws {
        let m = UUID()
        var scheduled = try SendRequest(eventID: event, message: "Safe?")
        scheduled.poll = .safety
        scheduled.force = true
        scheduled.schedule = .at(Date(timeIntervalSince1970: 1_800_000_000.5))
        let requests: [ClientRequest] = [
            .subscribe(eventID: event, sinceSeq: nil), .subscribe(eventID: event, sinceSeq: 9_007_199_254_740_000),
            .unsubscribe(eventID: event),
            .send(try SendRequest(eventID: event, message: Self.names[2])),
            .send(try SendRequest(eventID: event, message: "x", messageType: "emergency", priority: "urgent", expiresInMinutes: 5,
                                  escalateAfterMinutes: 3).withTeams(["Gate A", "B"])),
            .send(scheduled),
            .send(try SendRequest.byTemplate(eventID: event, name: "Gates", priority: "high")),
            .markRead(messageID: m), .markAllRead(eventID: event, throughSeq: 7), .markAllRead(eventID: event, throughSeq: nil),
            .markNotificationRead(notificationID: m), .history(eventID: event, beforeSeq: 10, limit: 20),
            .history(eventID: event, beforeSeq: nil, afterSeq: 3, limit: 200), .listEvents, .ping,
            .edit(messageID: m, message: Self.names[2] + "\nline 2\t/"), .retract(messageID: m),
            .reply(try ReplyRequest(messageID: m, status: "custom", text: "Stuck at gate 3 ✓")),
            .reply(try ReplyRequest(messageID: m, status: "on_my_way", text: nil)), .answer(messageID: m, option: 5),
        ]
        for request in requests {
            for ref in [nil, "c1", #"q"\é"#] {
                let frame = ClientFrame(ref: ref, request: request)
                let bytes = Array(try JSONEncoder().encode(frame))
                XCTAssertEqual(ClientFrameDecoder.decode(bytes), .success(frame), String(decoding: bytes, as: UTF8.self))
            }
        }
    }

    func testBodiesNameTheFieldAtFault() {
        func message(_ text: String, _ decode: ([UInt8]) throws(StaffcastError) -> Void) -> String? {
            do { try decode(Array(text.utf8)); return nil } catch { return error.message }
        }
        let team: ([UInt8]) throws(StaffcastError) -> Void = { b throws(StaffcastError) in _ = try TeamRequest.decode(b) }
        XCTAssertEqual(message(#"{"name":5}"#, team), "name must be a string.")
        XCTAssertEqual(message(#"{"kind":"team"}"#, team), "The JSON body needs a \"name\".")
        XCTAssertEqual(message(#"{"name":"A","kind":"squad"}"#, team), "kind must be \"team\" or \"zone\"; got 'squad'.")
        XCTAssertEqual(message("[1]", team), "The body must be a JSON object {\"name\": \"…\", \"kind\": \"team\" or \"zone\"}.")
        let answer: ([UInt8]) throws(StaffcastError) -> Void = { b throws(StaffcastError) in _ = try PollAnswerRequest.decode(b) }
        XCTAssertEqual(message(#"{"option":true}"#, answer), "option must be a whole number.")
        XCTAssertEqual(message(#"{"option":1.5}"#, answer), "option must be a whole number.")
        XCTAssertEqual(message(#"{"option":9223372036854775807}"#, answer), "option is too large: at most 9000000000000000000.")
        XCTAssertEqual(message(#"{"option":-1}"#, answer), "option must be at least 0; got -1.")
        XCTAssertEqual(message(#"{"option":6}"#, answer), "option 6 is none of the poll's options (0 is the first; a poll has at most 6, so at most 5).")
        XCTAssertEqual(message(#"{}"#, answer), "Send {\"option\": N}, the 0-based index of the chosen option.")
        XCTAssertNil(message(#"{"option":2.0}"#, answer))
        let invite: ([UInt8]) throws(StaffcastError) -> Void = { [event] b throws(StaffcastError) in _ = try InviteRequest.decode(eventID: event, body: b) }
        XCTAssertEqual(message(#"{"max_uses":"3"}"#, invite), "max_uses must be a whole number.")
        XCTAssertEqual(message(#"{"access_level":3}"#, invite), "access_level must be a string.")
        let push: ([UInt8]) throws(StaffcastError) -> Void = { b throws(StaffcastError) in _ = try PushSubscriptionRequest.decode(body: b) }
        XCTAssertEqual(message(#"{"endpoint":"https://p.example/1","keys":{"p256dh":1}}"#, push), "p256dh must be a string.")
        XCTAssertEqual(message(#"{"endpoint":"https://p.example/1","keys":[]}"#, push), "keys is missing: {\"p256dh\":\"…\",\"auth\":\"…\"}.")
        let hook: ([UInt8]) throws(StaffcastError) -> Void = { [event] b throws(StaffcastError) in _ = try WebhookRequest.decode(eventID: event, body: b) }
        XCTAssertEqual(message(#"{"url":"https://h.example","secret":"0123456789abcdef","events":["message",1]}"#, hook),
                       "events must be an array of: message, receipt, reply, answer, escalation.")
        XCTAssertEqual(message(#"{"url":"https://h.example","secret":7}"#, hook), "secret must be a string.")
        let send: ([UInt8]) throws(StaffcastError) -> Void = { [event] b throws(StaffcastError) in
            _ = try WireJSON.decode(SendBody.self, from: b, notAnObject: "not an object").request(eventID: event, who: "send")
        }
        XCTAssertEqual(message(#"{"message":"x","teams":"A"}"#, send), "teams must be an array of strings.")
        XCTAssertEqual(message(#"{"message":"x","force":1}"#, send), "force must be true or false.")
        XCTAssertEqual(message(#"{"message":"x","poll":{"options":"maybe"}}"#, send), "poll options must be an array of 2 to 6 strings, or \"safe\".")
        XCTAssertEqual(message(#"{"message":"x","poll":[]}"#, send), "poll must be an object: {\"options\": [\"Yes\", \"No\"]} or {\"options\": \"safe\"}.")
        XCTAssertEqual(message(#"{"message":"x","template":"y"}"#, send), "send takes \"message\" or \"template\", not both.")
        XCTAssertEqual(message("nope", send), "not an object")
    }

    func testRequestBodiesRoundTrip() throws {
        let body = SendBody(message: "Gates open ✓", messageType: "alert", expiresInMinutes: 30, force: true, teams: ["A"], poll: .safety)
        let decoded = try WireJSON.decode(SendBody.self, from: Array(JSONEncoder().encode(body)), notAnObject: "")
        XCTAssertEqual(decoded, body)
        XCTAssertEqual(try TeamRequest.decode(Array(JSONEncoder().encode(TeamRequest(name: "Zone 1", kind: .zone)))).kind, .zone)
        XCTAssertEqual(try PollAnswerRequest.decode(Array(JSONEncoder().encode(PollAnswerRequest(option: 3)))), 3)
        XCTAssertEqual(try RedeemRequest.decode(Array(JSONEncoder().encode(RedeemRequest(displayName: "Sam (gate 3)")))), "Sam (gate 3)")
        let template = try WireJSON.decode(TemplateBody.self, from: Array(JSONEncoder().encode(TemplateBody(name: "T", message: "m"))),
                                           notAnObject: "").validated(eventID: event)
        XCTAssertEqual(template.name, "T")
        let error = StaffcastError(.conflict, "Twice \"quoted\" ✓")
        XCTAssertEqual(ErrorBody.decode(try JSONEncoder().encode(ErrorBody(error))), ErrorBody.Detail(code: "conflict", message: error.message))
        let notice = EscalationNotice(messageID: event, round: 2, unreadBy: [TeamMember(userID: event, displayName: "Zoë")])
        XCTAssertEqual(try JSONDecoder().decode(EscalationNotice.self, from: Data(try notice.json().utf8)), notice)
        XCTAssertTrue(try notice.json().contains(event.uuidString.lowercased()))
    }

    func testWireIdsAreLowercaseAndTimesRFC3339() throws {
        let team = Team(name: "A", eventID: event, kind: .team, members: 3)
        let text = String(decoding: try JSONEncoder().encode(team), as: UTF8.self)
        XCTAssertTrue(text.contains(#""event_id":"\#(event.uuidString.lowercased())""#), text)
        XCTAssertEqual(try JSONDecoder().decode(Team.self, from: Data(text.utf8)), team)
        let at = Date(timeIntervalSince1970: 1_800_000_000.125)
        let invite = Invite(code: "c", url: "https://x/join/c", eventID: event, accessLevel: .admin, expiresAt: at, maxUses: 2, uses: 0)
        let inviteText = String(decoding: try JSONEncoder().encode(invite), as: UTF8.self)
        XCTAssertTrue(inviteText.contains(RFC3339.format(at)), inviteText)
        XCTAssertEqual(try JSONDecoder().decode(Invite.self, from: Data(inviteText.utf8)), invite)
    }
}
