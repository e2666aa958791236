import Foundation
import StaffcastCore
import XCTest

final class ClientFrameDecoderTests: XCTestCase {
    let event = UUID()

    func decode(_ text: String) -> Result<ClientFrame, ClientFrameError> {
        ClientFrameDecoder.decode(Array(text.utf8))
    }

    func request(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> ClientRequest? {
        switch decode(text) {
        case .success(let f): return f.request
        case .failure(let e):
            XCTFail("\(e)", file: file, line: line)
            return nil
        }
    }

    func error(_ text: String) -> ClientFrameError? {
        if case .failure(let e) = decode(text) { return e }
        return nil
    }

    func testEveryOpDecodes() throws {
        let id = event.uuidString.lowercased()
        XCTAssertEqual(request(#"{"op":"subscribe","event_id":"\#(id)"}"#), .subscribe(eventID: event, sinceSeq: nil))
        XCTAssertEqual(request(#"{"op":"subscribe","event_id":"\#(id)","since_seq":42}"#), .subscribe(eventID: event, sinceSeq: 42))
        XCTAssertEqual(request(#"{"op":"unsubscribe","event_id":"\#(id)"}"#), .unsubscribe(eventID: event))
        XCTAssertEqual(request(#"{"op":"send","event_id":"\#(id)","message":"hi"}"#),
                       .send(try SendRequest(eventID: event, message: "hi")))
        XCTAssertEqual(request(#"{"op":"send","event_id":"\#(id)","message":"hi","message_type":"emergency","priority":"urgent","expires_in_minutes":5}"#),
                       .send(try SendRequest(eventID: event, message: "hi", messageType: "emergency", priority: "urgent", expiresInMinutes: 5)))
        XCTAssertEqual(request(#"{"op":"mark_read","message_id":"\#(id)"}"#), .markRead(messageID: event))
        XCTAssertEqual(request(#"{"op":"mark_all_read","event_id":"\#(id)","through_seq":42}"#), .markAllRead(eventID: event, throughSeq: 42))
        XCTAssertEqual(request(#"{"op":"mark_all_read","event_id":"\#(id)"}"#), .markAllRead(eventID: event, throughSeq: nil))
        XCTAssertEqual(request(#"{"op":"mark_notification_read","notification_id":"\#(id)"}"#), .markNotificationRead(notificationID: event))
        XCTAssertEqual(request(#"{"op":"history","event_id":"\#(id)"}"#), .history(eventID: event, beforeSeq: nil, limit: 50))
        XCTAssertEqual(request(#"{"op":"history","event_id":"\#(id)","before_seq":9,"limit":200}"#), .history(eventID: event, beforeSeq: 9, limit: 200))
        XCTAssertEqual(request(#"{"op":"ping"}"#), .ping)
        XCTAssertEqual(request(#"{"op":"list_events"}"#), .listEvents)
    }

    func testRefIsKeptEvenWhenTheFrameIsInvalid() {
        if case .success(let f) = decode(#"{"op":"ping","ref":"abc"}"#) { XCTAssertEqual(f.ref, "abc") } else { XCTFail() }
        XCTAssertEqual(error(#"{"op":"nope","ref":"r1"}"#)?.ref, "r1")
        XCTAssertEqual(error(#"{"op":"subscribe","ref":"r2"}"#)?.ref, "r2")
    }

    func testBadFramesNameTheProblem() {
        let cases: [(String, ErrorCode, String)] = [
            ("nope", .invalid, "JSON"),
            ("[]", .invalid, "object"),
            (#"{}"#, .invalid, "op"),
            (#"{"op":1}"#, .invalid, "op"),
            (#"{"op":"subscribe"}"#, .invalid, "event_id"),
            (#"{"op":"subscribe","event_id":"x"}"#, .invalid, "UUID"),
            (#"{"op":"subscribe","event_id":"\#(event)","since_seq":-1}"#, .invalid, "since_seq"),
            (#"{"op":"subscribe","event_id":"\#(event)","since_seq":1.5}"#, .invalid, "since_seq"),
            (#"{"op":"subscribe","event_id":"\#(event)","since_seq":false}"#, .invalid, "since_seq"),
            (#"{"op":"history","event_id":"\#(event)","limit":0}"#, .invalid, "limit"),
            (#"{"op":"history","event_id":"\#(event)","limit":201}"#, .invalid, "200"),
            (#"{"op":"send","event_id":"\#(event)"}"#, .invalid, "message"),
            (#"{"op":"send","event_id":"\#(event)","message":true}"#, .invalid, "message"),
            (#"{"op":"send","event_id":"\#(event)","message":"x","priority":"max"}"#, .invalid, "priority"),
            (#"{"op":"fly"}"#, .invalid, "Unknown op"),
        ]
        for (text, code, word) in cases {
            guard let e = error(text) else { XCTFail("accepted \(text)"); continue }
            XCTAssertEqual(e.error.code, code, text)
            XCTAssertTrue(e.error.message.contains(word), "\(text): \(e.error.message)")
        }
    }

    func testOversizedFrameIsTooLarge() {
        let big = [UInt8](repeating: 0x20, count: Limits.maxFrameBytes + 1)
        guard case .failure(let e) = ClientFrameDecoder.decode(big) else { return XCTFail() }
        XCTAssertEqual(e.error.code, .tooLarge)
    }

    func testTeamsPollsAndAnswers() {
        let e = event.uuidString
        guard case .send(let send)? = request(#"{"op":"send","event_id":"\#(e)","message":"Q","teams":["Security","Gate 3","Security"],"poll":{"options":["Yes","No"]}}"#) else {
            return XCTFail()
        }
        XCTAssertEqual(send.teams, ["Security", "Gate 3"], "repeats dropped")
        XCTAssertEqual(send.poll?.options, ["Yes", "No"])
        guard case .send(let safe)? = request(#"{"op":"send","event_id":"\#(e)","message":"Are you safe?","poll":{"options":"safe"}}"#) else {
            return XCTFail()
        }
        XCTAssertEqual(safe.poll, .safety)
        let id = UUID()
        XCTAssertEqual(request(#"{"op":"answer","message_id":"\#(id.uuidString)","option":1}"#), .answer(messageID: id, option: 1))
        for bad in [#"{"op":"send","event_id":"\#(e)","message":"Q","teams":"Security"}"#,
                    #"{"op":"send","event_id":"\#(e)","message":"Q","teams":["a/b"]}"#,
                    #"{"op":"send","event_id":"\#(e)","message":"Q","poll":{"options":["one"]}}"#,
                    #"{"op":"send","event_id":"\#(e)","message":"Q","poll":{"options":["a","a"]}}"#,
                    #"{"op":"send","event_id":"\#(e)","message":"Q","poll":{"options":["1","2","3","4","5","6","7"]}}"#,
                    #"{"op":"send","event_id":"\#(e)","message":"Q","poll":{"options":"maybe"}}"#,
                    #"{"op":"answer","message_id":"\#(id.uuidString)","option":6}"#,
                    #"{"op":"answer","message_id":"\#(id.uuidString)","option":-1}"#,
                    #"{"op":"answer","message_id":"\#(id.uuidString)"}"#] {
            XCTAssertEqual(error(bad)?.error.code, .invalid, bad)
        }
        XCTAssertEqual(try? Poll.parse("Yes, No ,Maybe").options, ["Yes", "No", "Maybe"])
        XCTAssertThrowsError(try Poll.parse("Yes"))
    }

    /// One subscribe with a 20-digit since_seq overflowed Int64 in the byte reader and trapped,
    /// taking the whole server down (attack round 3). Huge numbers are refused, never read.
    func testNumbersTooLargeForASeqAreRefusedNotATrap() {
        for digits in ["99999999999999999999", "9223372036854775808", "123456789012345678901234567890"] {
            for frame in [#"{"op":"subscribe","event_id":"\#(event)","since_seq":\#(digits)}"#,
                          #"{"op":"history","event_id":"\#(event)","after_seq":\#(digits)}"#,
                          #"{"op":"answer","message_id":"\#(event)","option":\#(digits)}"#,
                          #"{"op":"history","event_id":"\#(event)","limit":\#(digits)}"#] {
                XCTAssertNotNil(error(frame), frame)
            }
        }
        // The largest seq the reader takes (15 digits) still works.
        guard case .subscribe(_, let seq)? = request(#"{"op":"subscribe","event_id":"\#(event)","since_seq":999999999999999}"#) else {
            return XCTFail("no subscribe")
        }
        XCTAssertEqual(seq, 999_999_999_999_999)
    }
}

final class SendRequestTests: XCTestCase {
    func testLimits() throws {
        let e = UUID()
        XCTAssertNoThrow(try SendRequest(eventID: e, message: String(repeating: "a", count: 4_096)))
        XCTAssertThrowsError(try SendRequest(eventID: e, message: String(repeating: "a", count: 4_097))) {
            XCTAssertEqual(($0 as? StaffcastError)?.code, .tooLarge)
        }
        XCTAssertThrowsError(try SendRequest(eventID: e, message: String(repeating: "€", count: 1_366))) // 4,098 bytes
        XCTAssertThrowsError(try SendRequest(eventID: e, message: " \n\t"))
        XCTAssertNoThrow(try SendRequest(eventID: e, message: "x", expiresInMinutes: 1))
        XCTAssertNoThrow(try SendRequest(eventID: e, message: "x", expiresInMinutes: 43_200))
        XCTAssertThrowsError(try SendRequest(eventID: e, message: "x", expiresInMinutes: 0))
        XCTAssertThrowsError(try SendRequest(eventID: e, message: "x", expiresInMinutes: 43_201))
        XCTAssertThrowsError(try SendRequest(eventID: e, message: "x", messageType: "BROADCAST"))
        let r = try SendRequest(eventID: e, message: "x")
        XCTAssertEqual(r.messageType, .broadcast)
        XCTAssertEqual(r.priority, .normal)
    }

    func testHistoryTakesAfterSeqOrBeforeSeqButNotBoth() throws {
        let e = UUID().uuidString
        let after = try ClientFrameDecoder.decode(Array(#"{"op":"history","event_id":"\#(e)","after_seq":7,"limit":3}"#.utf8)).get()
        XCTAssertEqual(after.request, .history(eventID: UUID(uuidString: e)!, beforeSeq: nil, afterSeq: 7, limit: 3))
        guard case .failure(let both) = ClientFrameDecoder.decode(Array(#"{"op":"history","event_id":"\#(e)","after_seq":7,"before_seq":9}"#.utf8)) else {
            return XCTFail("before_seq and after_seq together must be refused")
        }
        XCTAssertEqual(both.error.code, .invalid)
    }

}
