import Foundation
@testable import StaffcastCore
import XCTest

/// The storm's hand-written paths — `subscribe`/`ping` read from bytes, `hello` written into
/// bytes — give exactly what the general (Foundation) paths give.
final class StormFramesTests: XCTestCase {
    let event = UUID(uuidString: "0F1E2D3C-4B5A-6978-8796-A5B4C3D2E1F0")!

    /// Frames the plain reader takes: the same frame as JSONSerialization's path.
    func testPlainSubscribeAndPingDecodeLikeTheGeneralPath() throws {
        let id = event.uuidString.lowercased()
        let frames = [
            #"{"op":"subscribe","event_id":"\#(id)"}"#,
            #"{"op":"subscribe","event_id":"\#(id)","since_seq":0}"#,
            #"{"op":"subscribe","event_id":"\#(event.uuidString)","since_seq":123456789012345,"ref":"r-1"}"#,
            #" { "ref" : "a b/c" , "since_seq" : 7 , "event_id" : "\#(id)" , "op" : "subscribe" } "#,
            "{\"op\":\"subscribe\",\n\t\"event_id\":\"\(id)\"}",
            #"{"op":"ping"}"#,
            #"{"op":"ping","ref":""}"#,
        ]
        for text in frames {
            let bytes = Array(text.utf8)
            let plain = try XCTUnwrap(ClientFrameDecoder.decodePlain(bytes), "the plain reader should take \(text)")
            XCTAssertEqual(try ClientFrameDecoder.decodeGeneral(bytes).get(), plain, text)
            XCTAssertEqual(try ClientFrameDecoder.decode(bytes).get(), plain, text)
        }
        XCTAssertEqual(ClientFrameDecoder.decodePlain(Array(#"{"op":"subscribe","event_id":"\#(id)","since_seq":42,"ref":"x"}"#.utf8)),
                       ClientFrame(ref: "x", request: .subscribe(eventID: event, sinceSeq: 42)))
    }

    /// Everything else goes the general way, and gets its answer (or its precise error) there.
    func testEverythingElseGoesTheGeneralWay() {
        let id = event.uuidString.lowercased()
        let frames = [
            #"{"op":"subscribe","event_id":"\#(id)","ref":"caf\u00e9"}"#, // an escape
            #"{"op":"subscribe","event_id":"\#(id)","ref":"café"}"#, // non-ASCII
            #"{"op":"subscribe","event_id":"\#(id)","since_seq":1.0}"#, // a fraction
            #"{"op":"subscribe","event_id":"\#(id)","since_seq":1e3}"#, // an exponent
            #"{"op":"subscribe","event_id":"\#(id)","since_seq":-1}"#, // refused: negative
            #"{"op":"subscribe","event_id":"\#(id)","since_seq":01}"#, // not JSON
            #"{"op":"subscribe","event_id":"\#(id)","since_seq":"5"}"#, // refused: a string
            #"{"op":"subscribe","event_id":"\#(id)","since_seq":null}"#,
            #"{"op":"subscribe","event_id":"not-a-uuid"}"#, // refused, naming the field
            #"{"op":"subscribe"}"#, // refused: no event_id
            #"{"op":"subscribe","event_id":"\#(id)","extra":"x"}"#, // an unknown key
            #"{"op":"subscribe","op":"ping","event_id":"\#(id)"}"#, // a repeated key
            #"{"op":"ping","event_id":"\#(id)"}"#,
            #"{"op":"unsubscribe","event_id":"\#(id)"}"#, // another op
            #"{"op":"subscribe","event_id":"\#(id)"} x"#, // trailing bytes
            #"{"op":"subscribe","event_id":"\#(id)""#, // cut short
            #"{}"#,
            #"[]"#,
            "",
        ]
        for text in frames {
            let bytes = Array(text.utf8)
            XCTAssertNil(ClientFrameDecoder.decodePlain(bytes), text)
            XCTAssertEqual(ClientFrameDecoder.decode(bytes), ClientFrameDecoder.decodeGeneral(bytes), text)
        }
        // The general way still reads what the plain one leaves to it.
        XCTAssertEqual(try? ClientFrameDecoder.decode(Array(#"{"op":"subscribe","event_id":"\#(id)","ref":"caf\u00e9"}"#.utf8)).get(),
                       ClientFrame(ref: "café", request: .subscribe(eventID: event, sinceSeq: nil)))
        if case .failure(let e) = ClientFrameDecoder.decode(Array(#"{"op":"subscribe","event_id":"not-a-uuid","ref":"r"}"#.utf8)) {
            XCTAssertEqual(e.ref, "r")
            XCTAssertEqual(e.error.code, .invalid)
            XCTAssertTrue(e.error.message.contains("event_id"), e.error.message)
        } else {
            XCTFail("a bad event_id must be refused")
        }
    }

    /// `hello` written into bytes decodes to the same frame, and carries the same keys and
    /// values as the Codable encoding.
    func testHelloBytesMatchTheCodableEncoding() throws {
        let cases: [(Identity, Date, String)] = [
            (Identity(userID: event, displayName: "Ana \"Q\" Pérez\n/\\"), Date(timeIntervalSince1970: 1_795_000_000.123_9), "node-1"),
            (Identity(userID: UUID(), displayName: ""), Date(timeIntervalSince1970: 0), ""),
            (Identity(userID: UUID(), displayName: "Staff 1"), Date(), "stadium-a/2"),
        ]
        for (user, time, node) in cases {
            let frame = ServerFrame.hello(user: user, serverTime: time, node: node)
            let fast = frame.encoded()
            let codable = Array(try JSONEncoder().encode(frame))
            XCTAssertEqual(try ServerFrame.decode(fast), try ServerFrame.decode(codable))
            let a = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(fast)) as? NSDictionary)
            let b = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(codable)) as? NSDictionary)
            XCTAssertEqual(a, b, String(decoding: fast, as: UTF8.self))
        }
    }
}

/// Which logs a read of the change feed looks at (`ChangeLogs`).
final class ChangeLogsTests: XCTestCase {
    func testAReadWokenByNotificationsReadsTheNamedLogsAndAlwaysTheGates() {
        XCTAssertEqual(ChangeLogs.toRead(after: ["message"]), [.access, .token, .message])
        XCTAssertEqual(ChangeLogs.toRead(after: ["message", "message", "read", "answer"]), [.access, .token, .message, .read, .answer])
        XCTAssertEqual(ChangeLogs.toRead(after: ["access"]), .gates)
        XCTAssertEqual(ChangeLogs.toRead(after: []), .gates)
        // Every payload the triggers send (sql/: staffcast_notify('…')) names one log.
        for payload in ["access", "token", "message", "notification", "message_change", "reply", "read", "round", "answer"] {
            XCTAssertNotNil(ChangeLogs.named(payload), payload)
        }
        XCTAssertEqual(ChangeLogs.toRead(after: ["access", "token", "message", "notification", "message_change", "reply", "read",
                                                 "round", "answer"]), .all)
    }

    func testAPayloadThisVersionDoesNotKnowReadsEverything() {
        XCTAssertEqual(ChangeLogs.toRead(after: ["message", "something_new"]), .all)
        XCTAssertEqual(ChangeLogs.toRead(after: [""]), .all)
    }

    func testASendBatchNamingItsOriginStillNamesTheMessageLog() {
        // sql/014: a batch committed for its own server's fan-out notifies `message@<origin>`.
        XCTAssertEqual(ChangeLogs.named("message@3f2a:17"), .message)
        XCTAssertEqual(ChangeLogs.toRead(after: ["message@3f2a", "access"]), [.access, .token, .message])
        XCTAssertEqual(ChangeLogs.toRead(after: ["nonsense@3f2a"]), .all)
    }

    func testOwnSendBatchesAreNamedOnlyWhenEveryPayloadIsThisServersBatch() {
        XCTAssertEqual(ChangeLogs.ownSendBatches(["message@me:4", "message@me:5"], origin: "me"), [4, 5])
        XCTAssertNil(ChangeLogs.ownSendBatches([], origin: "me"), "nothing arrived: not a wake-up to skip")
        XCTAssertNil(ChangeLogs.ownSendBatches(["message@me:4", "message@other:9"], origin: "me"), "another server's batch")
        XCTAssertNil(ChangeLogs.ownSendBatches(["message@me:4", "message"], origin: "me"), "a send without origin (alone, scheduled)")
        XCTAssertNil(ChangeLogs.ownSendBatches(["message@me:4", "access"], origin: "me"), "an access change")
        XCTAssertNil(ChangeLogs.ownSendBatches(["message@me:x"], origin: "me"))
        XCTAssertNil(ChangeLogs.ownSendBatches(["message@mem:4"], origin: "me"), "an origin that only starts the same")
        XCTAssertNil(ChangeLogs.ownSendBatches(["read@me:4"], origin: "me"))
    }
}

/// The descriptor limit `serve` asks for (`FileLimitPolicy`).
final class FileLimitPolicyTests: XCTestCase {
    func testEnoughForMaxConnectionsUpToTheHardLimitAndNeverLower() {
        let room = FileLimitPolicy.headroom
        // A hard limit of a million: what 50,000 WebSockets need, not a million.
        XCTAssertEqual(FileLimitPolicy.target(current: 1_024, hard: 1_048_576, maxConnections: 50_000, tls: false), 50_000 + room)
        // Over TLS three descriptors each.
        XCTAssertEqual(FileLimitPolicy.target(current: 1_024, hard: 1_048_576, maxConnections: 50_000, tls: true), 150_000 + room)
        // Never above the hard limit, never below what is set already.
        XCTAssertEqual(FileLimitPolicy.target(current: 1_024, hard: 20_000, maxConnections: 50_000, tls: false), 20_000)
        XCTAssertEqual(FileLimitPolicy.target(current: 131_072, hard: 131_072, maxConnections: 1_000, tls: false), 131_072)
        XCTAssertEqual(FileLimitPolicy.target(current: 1_024, hard: .max, maxConnections: Int.max, tls: true), (1 << 40) * 3 + room)
        XCTAssertEqual(FileLimitPolicy.target(current: 1_024, hard: 65_536, maxConnections: 0, tls: false), room)
    }
}
