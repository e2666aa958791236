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
        XCTAssertTrue(text.contains("\r\n=2E\r\n"), "a lone dot is encoded, so it cannot end the data")
        XCTAssertFalse(text.contains("\r\n."), "no line starts with a dot")
        XCTAssertFalse(text.replacingOccurrences(of: "\r\n", with: "").contains("\n"), "every line ends in CRLF")
        XCTAssertTrue(text.contains("https://staff.example.org/app"))
    }

    /// An emergency pasted as one line of 5,000 bytes (and any script) is sent in lines of at
    /// most 76 characters, plain ASCII, that decode back to the text (RFC 5322 allows 998).
    func testALongLineIsWrappedByQuotedPrintable() throws {
        let long = String(repeating: "Evacuate hall B now = ", count: 200) + String(repeating: "Şimdi çıkın. ", count: 100)
        let message = StaffMessage(id: UUID(), seq: 1, eventID: UUID(), senderID: UUID(), senderName: "Olivia",
                                   message: long + "\n.trailing dot line ", messageType: .emergency, priority: .urgent,
                                   sentAt: Date(timeIntervalSince1970: 1_795_300_000), expiresAt: nil, read: false, readCount: 0)
        let text = EmailText.compose(from: "staffcast@example.org", to: "sam@example.org", name: "Sam", eventName: "Fest",
                                     message: message, appURL: "https://staff.example.org/app", messageID: "<x@staffcast>")
        XCTAssertTrue(text.contains("Content-Transfer-Encoding: quoted-printable\r\n"))
        let body = text.components(separatedBy: "\r\n\r\n").dropFirst().joined(separator: "\r\n\r\n")
        for line in body.components(separatedBy: "\r\n") {
            XCTAssertLessThanOrEqual(line.utf8.count, 76, line)
            XCTAssertTrue(line.utf8.allSatisfy { $0 < 0x80 }, line)
        }
        XCTAssertTrue(Self.decodeQuotedPrintable(body).contains(long + "\r\n.trailing dot line \r\n"), "decodes back to the text")
    }

    /// RFC 2045 decoding, written apart from the encoder.
    static func decodeQuotedPrintable(_ text: String) -> String {
        var bytes: [UInt8] = []
        let u = Array(text.utf8)
        var i = 0
        while i < u.count {
            if u[i] == 0x3D, i + 2 < u.count, u[i + 1] == 0x0D, u[i + 2] == 0x0A {
                i += 3
            } else if u[i] == 0x3D, i + 2 < u.count, let v = UInt8(String(decoding: u[(i + 1)...(i + 2)], as: UTF8.self), radix: 16) {
                bytes.append(v)
                i += 3
            } else {
                bytes.append(u[i])
                i += 1
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
