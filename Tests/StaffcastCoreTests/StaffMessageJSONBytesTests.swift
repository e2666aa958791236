import Foundation
import StaffcastCore
import XCTest

/// `StaffMessage.appendJSON` (the hot path of every send's answer and fan-out) writes exactly
/// what the Codable encoding writes: the same keys, the same values, nulls present.
final class StaffMessageJSONBytesTests: XCTestCase {
    func object(_ bytes: [UInt8]) throws -> NSDictionary {
        try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(bytes)) as? NSDictionary)
    }

    func messages() throws -> [StaffMessage] {
        var plain = StaffMessage(id: UUID(), seq: 1, eventID: UUID(), senderID: UUID(), senderName: "Olivia",
                                 message: "Gates open", messageType: .broadcast, priority: .normal,
                                 sentAt: Date(timeIntervalSince1970: 1_800_000_000.125), expiresAt: nil, read: false, readCount: 0)
        var full = plain
        full.seq = 9_007_199_254_740_000
        full.senderName = #"Q "the" \ boss"#
        full.message = "Line 1\nLine 2\t✓ 門 \u{1F6A8} / \r \"quoted\""
        full.messageType = .emergency
        full.priority = .urgent
        full.expiresAt = Date(timeIntervalSince1970: 1_800_003_600.25)
        full.read = true
        full.readCount = 10_000
        full.escalateAfterMinutes = 5
        full.editedAt = Date(timeIntervalSince1970: 1_800_000_060.5)
        full.teams = ["Gate A", "Medics \"north\""]
        full.poll = try Poll(options: Poll.safetyOptions)
        full.answer = 1
        plain.teams = []
        var empty = plain
        empty.senderName = ""
        empty.teams = ["x"]
        empty.poll = try Poll(options: ["Yes", "No", "Maybe"])
        empty.answer = 0
        return [plain, full, empty]
    }

    func testTheMessageObjectIsTheCodableOne() throws {
        for m in try messages() {
            XCTAssertEqual(try object(m.jsonBytes), try object(Array(JSONEncoder().encode(m))), "\(m)")
            XCTAssertEqual(try JSONDecoder().decode(StaffMessage.self, from: Data(m.jsonBytes)), m)
        }
    }

    func testSentAndMessageFramesDecodeToWhatWasEncoded() throws {
        for m in try messages() {
            XCTAssertEqual(try ServerFrame.decode(ServerFrame.sent(ref: #"r"1\"#, message: m).encoded()), .sent(ref: #"r"1\"#, message: m))
            XCTAssertEqual(try ServerFrame.decode(ServerFrame.sent(ref: nil, message: m).encoded()), .sent(ref: nil, message: m))
            XCTAssertEqual(try ServerFrame.decode(ServerFrame.message(m).encoded()), .message(m))
            let frame = try object(ServerFrame.sent(ref: "a", message: m).encoded())
            XCTAssertEqual(Set(frame.allKeys.compactMap { $0 as? String }), ["op", "ref", "message"])
        }
    }
}
