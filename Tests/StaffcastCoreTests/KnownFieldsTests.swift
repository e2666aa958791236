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
}
