import StaffcastCore
import XCTest

final class KnownFieldsTests: XCTestCase {
    func testAMistypedSendFieldIsRefusedAndNamedWithWhatItMeant() {
        XCTAssertThrowsError(try WireJSON.decode(SendBody.self, from: Array(#"{"message":"Evacuate","priorty":"urgent"}"#.utf8),
                                                 notAnObject: "not an object")) {
            let message = ($0 as? StaffcastError)?.message ?? ""
            XCTAssertTrue(message.contains("'priorty' (did you mean 'priority'?)"), message)
        }
        XCTAssertThrowsError(try WireJSON.decode(SendBody.self, from: Array(#"{"message":"x","zzzzzzzzzz":1}"#.utf8),
                                                 notAnObject: "not an object")) {
            XCTAssertFalse((($0 as? StaffcastError)?.message ?? "").contains("did you mean"))
        }
        XCTAssertNoThrow(try WireJSON.decode(SendBody.self, from: Array(#"{"message":"x","priority":"urgent","teams":null}"#.utf8),
                                             notAnObject: "not an object"))
    }

    func testAnEditHoldsTheTextAlone() {
        XCTAssertThrowsError(try WireJSON.decode(EditBody.self, from: Array(#"{"message":"x","priority":"urgent"}"#.utf8),
                                                 notAnObject: "not an object")) {
            XCTAssertTrue((($0 as? StaffcastError)?.message ?? "").contains("changes only the text"))
        }
    }

    /// What the client encodes, the server reads: every field SendBody writes is a known one.
    func testEverythingTheClientWritesIsKnown() throws {
        let body = SendBody(message: "x", messageType: "alert", priority: "high", expiresInMinutes: 5, escalateAfterMinutes: 3,
                            sendAt: "2026-07-01T10:00:00Z", force: true, teams: ["Gate 3"], poll: .safety)
        let decoded = try WireJSON.decode(SendBody.self, from: Array(try JSONEncoder().encode(body)), notAnObject: "")
        XCTAssertEqual(decoded, body)
    }

    /// The same refusal on the WebSocket, where the console sends (attack round 4).
    func testAWebSocketSendOrEditWithAMistypedFieldIsRefused() {
        let e = UUID().uuidString
        for frame in [#"{"op":"send","event_id":"\#(e)","message":"Evacuate","priorty":"urgent"}"#,
                      #"{"op":"send","event_id":"\#(e)","template":"evac","bogus":1}"#,
                      #"{"op":"send","event_id":"\#(e)","message":"Q?","poll":{"options":["Yes","No"],"x":1}}"#,
                      #"{"op":"edit","message_id":"\#(e)","message":"x","priority":"urgent"}"#] {
            guard case .failure(let error) = ClientFrameDecoder.decode(Array(frame.utf8)) else { return XCTFail("accepted: \(frame)") }
            XCTAssertEqual(error.error.code, .invalid, frame)
        }
        let fine = #"{"op":"send","ref":"7","event_id":"\#(e)","message":"Gates open","priority":"high","teams":["Gate 3"],"force":true}"#
        guard case .success = ClientFrameDecoder.decode(Array(fine.utf8)) else { return XCTFail("refused: \(fine)") }
    }

    /// `before_seq` alone pages back through the search path (the plain listing ignored it),
    /// and a listing's unknown parameter or since_seq beside before_seq is refused.
    func testAListingPagesBackWithBeforeSeqAndNamesAStrayParameter() {
        XCTAssertTrue(MessageSearch.isSearch(["before_seq": "10"]))
        XCTAssertFalse(MessageSearch.isSearch(["since_seq": "10", "limit": "3"]))
        XCTAssertNil(MessageSearch.listingProblem(["before_seq": "10", "limit": "3", "access_token": "x"]))
        XCTAssertNotNil(MessageSearch.listingProblem(["bogus": "1"]))
        XCTAssertNotNil(MessageSearch.listingProblem(["since_seq": "5", "before_seq": "10"]))
    }
}
