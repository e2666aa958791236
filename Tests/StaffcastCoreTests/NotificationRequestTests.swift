import Foundation
import StaffcastCore
import XCTest

/// What an organiser may send as a notification (`NotificationRequest`).
final class NotificationRequestTests: XCTestCase {
    /// The server's own alert types cannot be forged: the console shows them as someone needing
    /// help or nobody reading an emergency (attack round).
    func testTheServersOwnAlertTypesAreRefused() {
        for type in ["help", "escalation", "HELP", " Escalation "] {
            XCTAssertThrowsError(try NotificationRequest(userID: UUID(), type: type, title: "Fake", message: "x", data: nil), type) { error in
                XCTAssertEqual((error as? StaffcastError)?.code, .invalid)
                XCTAssertTrue((error as? StaffcastError)?.message.contains("server's own") == true)
            }
        }
        XCTAssertNoThrow(try NotificationRequest(userID: UUID(), type: "shift", title: "Shift change", message: "At 6", data: nil))
        XCTAssertNoThrow(try NotificationRequest(userID: UUID(), type: "helpdesk", title: "Desk", message: "Open", data: nil))
    }
}
