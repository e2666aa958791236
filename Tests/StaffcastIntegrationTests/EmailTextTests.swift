import Foundation
import StaffcastCore
@testable import StaffcastServer
import XCTest

/// The email for the unreached: headers that a name or a message cannot break, CRLF lines, and
/// a lone "." line that cannot end the SMTP data early.
final class EmailTextTests: XCTestCase {
    func testNamesAndTextCannotAddHeadersOrEndTheData() {
        let message = StaffMessage(id: UUID(), seq: 1, eventID: UUID(), senderID: UUID(), senderName: "Olivia",
                                   message: "Line one\n.\nŞimdi çıkın", messageType: .emergency, priority: .urgent,
                                   sentAt: Date(timeIntervalSince1970: 1_795_300_000), expiresAt: nil, read: false, readCount: 0)
        let text = EmailText.compose(from: "staffcast@example.org", to: "sam@example.org", name: "Sam\r\nBcc: evil@example.org",
                                     eventName: "Fest", message: message, appURL: "https://staff.example.org/app",
                                     messageID: "<x@staffcast>")
        let head = text.components(separatedBy: "\r\n\r\n").first ?? ""
        XCTAssertFalse(head.contains("\r\nBcc:"), head)
        XCTAssertTrue(head.contains("Subject: [EMERGENCY] Fest: Line one . Şimdi çıkın") || head.contains("Subject: =?utf-8?B?"), head)
        XCTAssertTrue(text.contains("\r\n..\r\n"), "a lone dot is doubled")
        XCTAssertFalse(text.replacingOccurrences(of: "\r\n", with: "").contains("\n"), "every line ends in CRLF")
        XCTAssertTrue(text.contains("https://staff.example.org/app"))
    }
}
