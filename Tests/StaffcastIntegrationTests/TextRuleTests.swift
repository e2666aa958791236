import Foundation
import StaffcastClient
import StaffcastCore
import XCTest

/// One rule for Unicode controls (docs/protocol.md, "Text"): U+0085 and the other C1 controls,
/// and U+2028/U+2029, are refused with `invalid` like NUL or ESC, over WebSocket and HTTP,
/// and nothing is stored.
final class TextRuleTests: IntegrationTestCase {
    static let refused = ["next\u{85}line", "line\u{2028}separator", "paragraph\u{2029}separator", "csi\u{9B}31m", "c1\u{80}", "c1\u{9F}"]

    func testC1ControlsAndLineSeparatorsAreInvalidAndStoreNothing() throws {
        let server = try startServer()
        let event = fixture.event.uuidString.lowercased()
        let owner = try server.connect(fixture.ownerToken)
        for text in Self.refused {
            let e = try owner.expectError(["op": "send", "event_id": event, "message": text, "ref": "r"])
            XCTAssertEqual(e.code, .invalid, text.debugDescription)
            XCTAssertTrue(e.message.contains("control character"), e.message)

            let json = try JSONSerialization.data(withJSONObject: ["message": text])
            let r = try server.api(fixture.ownerToken).raw("POST", "/v1/events/\(event)/messages", body: json,
                                                           contentType: "application/json")
            XCTAssertEqual(r.status, 400, text.debugDescription)
            let plain = try server.api(fixture.ownerToken).raw("POST", "/v1/events/\(event)/messages", body: Data(text.utf8),
                                                               contentType: "text/plain")
            XCTAssertEqual(plain.status, 400, text.debugDescription)
        }
        XCTAssertEqual(fixture.messageCount, 0, "nothing stored")
        // The same text with a plain new line is fine.
        try owner.send(["op": "send", "event_id": event, "message": "next\nline", "ref": "ok"])
        XCTAssertEqual(try owner.expect("sent").message?.message, "next\nline")
        XCTAssertEqual(fixture.messageCount, 1)
    }
}
