import Foundation
import StaffcastClient
import StaffcastCore
import StaffcastQR
import XCTest

/// The staff terminal's catalogue: every phrase in every language with the same placeholders,
/// the language chosen from --lang or the locale, Turkish screens that keep their widths, and
/// the QR code of a join link.
final class StringsTests: XCTestCase {
    func testEveryPhraseInEveryLanguageWithTheSamePlaceholders() {
        for language in Language.allCases {
            for phrase in Phrase.allCases {
                guard let text = Strings.template(phrase, language) else {
                    XCTFail("\(language) has no \(phrase)")
                    continue
                }
                XCTAssertFalse(text.trimmingCharacters(in: .whitespaces).isEmpty, "\(language) \(phrase) is empty")
                XCTAssertEqual(Strings.placeholders(text), Strings.placeholders(Strings.template(phrase, .en) ?? ""),
                               "\(language) \(phrase) has other placeholders than English")
            }
        }
        // Turkish is really Turkish: all but a few (NORMAL is NORMAL) differ from English.
        let same = Phrase.allCases.filter { Strings.template($0, .tr) == Strings.template($0, .en) }
        XCTAssertEqual(same, [.normal], "untranslated: \(same)")
    }

    func testFilledTexts() {
        let tr = Strings(.tr)
        XCTAssertEqual(tr.text(.unread, 3), " 3 okunmamış ")
        XCTAssertEqual(tr.text(.offline, ["reason": "x"]), "✕ çevrimdışı: x")
        XCTAssertEqual(tr.name(Priority.urgent), "ACİL")
        XCTAssertEqual(tr.name(MessageType.emergency), "ACİL DURUM")
        XCTAssertEqual(tr.name(AccessLevel.admin), "yönetici")
        XCTAssertEqual(Strings.english.name(Priority.high), "HIGH")
        XCTAssertEqual(WatchRenderer.timeAgo(180, tr), "3dk önce")
        XCTAssertEqual(WatchRenderer.timeAgo(3, tr), "şimdi")
        XCTAssertEqual(WatchRenderer.duration(7_200, tr), "2sa")
        XCTAssertEqual(WatchRenderer.timeAgo(180), "3m ago")
    }

    func testLanguageFromFlagThenLCAllThenLCMessagesThenLANG() throws {
        XCTAssertEqual(try Language.choose(flag: nil, environment: [:]), .en)
        XCTAssertEqual(try Language.choose(flag: nil, environment: ["LANG": "tr_TR.UTF-8"]), .tr)
        XCTAssertEqual(try Language.choose(flag: nil, environment: ["LANG": "en_GB.UTF-8", "LC_MESSAGES": "tr_TR"]), .tr)
        XCTAssertEqual(try Language.choose(flag: nil, environment: ["LC_ALL": "C", "LC_MESSAGES": "tr_TR"]), .en)
        XCTAssertEqual(try Language.choose(flag: nil, environment: ["LC_ALL": "", "LANG": "tr"]), .tr)
        XCTAssertEqual(try Language.choose(flag: nil, environment: ["LANG": "de_DE.UTF-8"]), .en, "unknown: English")
        XCTAssertEqual(try Language.choose(flag: "tr", environment: ["LC_ALL": "en_US.UTF-8"]), .tr)
        XCTAssertEqual(try Language.choose(flag: "EN", environment: ["LANG": "tr_TR.UTF-8"]), .en)
        XCTAssertThrowsError(try Language.choose(flag: "de", environment: [:]))
    }

    func testTurkishScreenKeepsEveryRowAtTheWidth() {
        let event = UUID()
        var state = WatchState(eventID: event)
        state.strings = Strings(.tr)
        state.connected(Identity(userID: UUID(), displayName: "Ayşe"))
        state.eventName = "Yaz Festivali — İstanbul"
        let now = Date()
        let m = StaffMessage(id: UUID(), seq: 1, eventID: event, senderID: UUID(), senderName: "Öğretmen Çağlar",
                             message: "Çıkış kapısı Ğ şimdi açık; ıslak zemin, İçeride kalın", messageType: .emergency,
                             priority: .urgent, sentAt: now.addingTimeInterval(-200), expiresAt: now.addingTimeInterval(300),
                             read: false, readCount: 0)
        state.subscribed(EventSummary(id: event, name: "Yaz Festivali — İstanbul", startsAt: nil, accessLevel: .staff),
                         history: [], unreadCount: 0)
        _ = state.live(m, now: now)
        for width in [40, 80, 123] {
            for mode in [WatchState.Mode.messages, .help, .notifications, .events] {
                state.mode = mode
                let lines = WatchRenderer.render(state, now: now, width: width, height: 24)
                XCTAssertEqual(lines.count, 24)
                for line in lines {
                    XCTAssertEqual(TextWidth.columns(line.text), width, "\(mode) at \(width): '\(line.text)'")
                }
            }
        }
        state.mode = .messages
        // The emergency holds the screen (in Turkish) until acknowledged; then the list shows.
        let alarm = WatchRenderer.render(state, now: now, width: 120, height: 24).map(\.text).joined(separator: "\n")
        XCTAssertTrue(alarm.contains("ACİL DURUM · ACİL · Öğretmen Çağlar") && alarm.contains("Shift+A'ya basın"), alarm)
        XCTAssertTrue(alarm.contains("! 1 onay bekliyor"), alarm)
        _ = state.key(.char("A"))
        let text = WatchRenderer.render(state, now: now, width: 120, height: 24).map(\.text).joined(separator: "\n")
        XCTAssertTrue(text.contains("[ACİL]  Öğretmen Çağlar: Çıkış kapısı"), text)
        XCTAssertTrue(text.contains("1 okunmamış"), text)
        XCTAssertTrue(text.contains("5dk içinde geçersiz"), text)
        XCTAssertTrue(text.contains("● bağlı"), text)
    }

    func testQRCodeOfAJoinLink() throws {
        let url = "http://10.0.0.5:8080/join/3q2-7wEXAMPLEcodeAbC_d"
        let code = try QRCode(url)
        XCTAssertEqual((code.size - 17) % 4, 0, "a QR code is 17 + 4·version modules wide")
        XCTAssertGreaterThanOrEqual(code.size, 29)
        // The three finder patterns: a dark 7x7 ring with a dark 3x3 centre in three corners.
        for (ox, oy) in [(0, 0), (code.size - 7, 0), (0, code.size - 7)] {
            XCTAssertTrue(code.isDark(ox, oy) && code.isDark(ox + 6, oy + 6) && code.isDark(ox + 3, oy + 3))
            XCTAssertFalse(code.isDark(ox + 1, oy + 1))
        }
        let lines = code.terminalText().split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        XCTAssertEqual(lines.count, (code.size + 4 + 1) / 2)
        for line in lines { XCTAssertEqual(line.count, code.size + 4) }
        let svg = code.svg()
        XCTAssertTrue(svg.hasPrefix("<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 \(code.size + 8) \(code.size + 8)\""))
        XCTAssertNotEqual(try QRCode(url + "x").modules, code.modules)
        XCTAssertThrowsError(try QRCode(""))
        XCTAssertThrowsError(try QRCode(String(repeating: "x", count: 5_000)))
    }
}
