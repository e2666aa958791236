import Foundation
import StaffcastClient
import StaffcastCore
import XCTest

/// The terminal's state after a restart, deep in history and in the detail view (issue 20):
/// restored emergencies, paging back, mark-all-read as one request, reply keys that answer
/// what the screen shows.
final class WatchStateHistoryTests: WatchStateTestCase {

    func state(history: [StaffMessage] = []) -> WatchState {
        var s = WatchState(eventID: event)
        s.connected(me)
        s.subscribed(EventSummary(id: event, name: "Fest", startsAt: nil, accessLevel: .staff), history: history, unreadCount: 0)
        return s
    }

    func testAfterARestartUnreadEmergenciesComeBackFromContextAndFromTheSearch() {
        // Restarted with a cursor: nothing new, then the context page before it holds an
        // unread emergency; the search at start finds an older urgent one.
        var s = state()
        let fire = message(40, "Fire at gate 4", type: .emergency)
        s.history([message(39), fire, message(41, "Old, read", priority: .urgent, read: true)], eventID: event, more: true)
        XCTAssertEqual(s.alarm?.message.id, fire.id, "an unread emergency in the context takes the screen")
        let old = message(3, "Evacuate hall B", priority: .urgent)
        var mine = message(2, "My own", type: .emergency)
        mine.senderID = me.userID
        s.restore([old, mine, message(1, "Read already", type: .emergency, read: true)])
        XCTAssertEqual(s.toAcknowledge.map(\.seq), [3, 40])
        XCTAssertEqual(s.alarms.map(\.messageID), [fire.id, old.id])
        XCTAssertEqual(s.historyFloor, 39, "restored messages do not move the paging floor")
        let screen = WatchRenderer.render(s, now: t0, width: 80, height: 24).map(\.text)
        XCTAssertTrue(screen[0].contains("! 2 to acknowledge"), screen[0])
        XCTAssertTrue(screen.contains { $0.contains("Fire at gate 4") })
        XCTAssertEqual(s.key(.char("A")), [.markRead(fire.id)])
        XCTAssertEqual(s.alarm?.message.id, old.id, "the next one takes the screen")
    }

    func testPagingBackAsksBeforeTheOldestLoadedUntilTheServerSaysNoMore() {
        var s = state(history: (51...100).map { message(Int64($0)) })
        XCTAssertEqual(s.historyFloor, 51)
        var asked: [WatchEffect] = []
        for _ in 0..<44 { asked += s.key(.down) }
        XCTAssertEqual(asked, [], "not yet near the oldest")
        asked = s.key(.down)
        XCTAssertEqual(asked, [.loadOlder(eventID: event, beforeSeq: 51)])
        for _ in 0..<4 { XCTAssertEqual(s.key(.down), [], "one page at a time") }
        XCTAssertTrue(WatchRenderer.render(s, now: t0, width: 80, height: 24).contains { $0.text.contains("Loading older") })
        s.history((1...50).map { message(Int64($0)) }, eventID: event, more: false)
        XCTAssertEqual(s.messages.count, 100)
        XCTAssertFalse(s.loadingOlder)
        XCTAssertEqual(s.historyFloor, 1)
        for _ in 0..<60 { XCTAssertEqual(s.key(.pageDown), [], "the server said there is nothing older") }
        XCTAssertEqual(s.message(atRow: s.selected)?.seq, 1, "the event's first message is reached")
        let screen = WatchRenderer.render(s, now: t0, width: 80, height: 24).map(\.text)
        XCTAssertTrue(screen.contains { $0.contains("the first message of this event") }, screen.joined(separator: "\n"))
        _ = s.key(.pageUp)
        XCTAssertEqual(s.selected, 89)
    }

    func testMarkAllReadIsOneRequestAndItsReplyLeavesEmergenciesToAcknowledge() {
        var s = state(history: (1...200).map { message(Int64($0)) })
        let alarm = message(201, "Evacuate", type: .emergency)
        _ = s.live(alarm, now: t0)
        _ = s.live(message(202), now: t0)
        XCTAssertEqual(s.key(.char("A")), [.markRead(alarm.id)])
        XCTAssertEqual(s.key(.char("a")), [.markAllRead(eventID: event, throughSeq: 202)])
        s.readAll(eventID: event, throughSeq: 202, marked: 201, unreadCount: 1)
        XCTAssertEqual(s.unreadCount, 1)
        XCTAssertEqual(s.messages.filter { !$0.read }.map(\.seq), [201], "the emergency waits for its own mark")
        XCTAssertTrue(s.status?.contains("201 marked read") == true)
        // A reply about another event changes nothing.
        var other = s
        other.readAll(eventID: UUID(), throughSeq: 500, marked: 1, unreadCount: 0)
        XCTAssertEqual(other.unreadCount, 1)
    }

    func testAfterAcknowledgingTheReplyKeysAnswerThatMessageNotTheRowSelectedBefore() {
        var s = state(history: (1...5).map { message(Int64($0)) })
        _ = s.key(.down)
        _ = s.key(.down) // row 2: seq 3
        let fire = message(6, "Fire at gate 4", type: .emergency)
        _ = s.live(message(7, "Coffee"), now: t0)
        _ = s.live(fire, now: t0)
        XCTAssertEqual(s.key(.char("1")), [], "no reply while the alarm holds the screen")
        XCTAssertEqual(s.key(.char("A")), [.markRead(fire.id)])
        XCTAssertEqual(s.message(atRow: s.selected)?.id, fire.id, "the acknowledged message is selected")
        XCTAssertEqual(s.key(.char("1")), [.reply(fire.id, .onMyWay)])
    }

    func testTheDetailViewShowsALongMessageInFullAt80x24AndAnswersIt() {
        let words = (1...400).map { "word\($0)" }.joined(separator: " ") // ~3,600 bytes: ~48 rows at 78 columns
        var s = state(history: [message(1, "Short"), message(2, words, priority: .high)])
        s.screenWidth = 80
        s.screenHeight = 24
        XCTAssertEqual(s.key(.enter), [.markRead(s.messages[1].id)], "opening it reads it")
        XCTAssertEqual(s.mode, .detail)
        var seen: [String] = []
        var screen = WatchRenderer.render(s, now: t0.addingTimeInterval(120), width: 80, height: 24).map(\.text)
        XCTAssertEqual(screen.count, 24)
        XCTAssertTrue(screen[1].contains("ALERT") || screen[1].contains("BROADCAST"), screen[1])
        XCTAssertTrue(screen[2].contains("From: Olivia"), screen[2])
        XCTAssertTrue(screen[3].contains("Sent: ") && screen[3].contains("2m ago") && screen[3].contains("read by 0"), screen[3])
        XCTAssertTrue(screen[23].contains("lines 1–18 of"), screen[23])
        for _ in 0..<40 {
            seen += screen[5..<23].map { $0.trimmingCharacters(in: .whitespaces) }
            _ = s.key(.pageDown)
            screen = WatchRenderer.render(s, now: t0, width: 80, height: 24).map(\.text)
        }
        for line in screen { XCTAssertEqual(TextWidth.columns(line), 80) }
        let shown = Set(seen.flatMap { $0.split(separator: " ").map(String.init) })
        XCTAssertTrue((1...400).allSatisfy { shown.contains("word\($0)") }, "every word can be read by scrolling")
        XCTAssertEqual(s.key(.char("4")), [.reply(s.messages[1].id, .done)], "the reply answers the message shown")
        XCTAssertEqual(s.mode, .detail)
        // A list key goes back to the list and acts there.
        XCTAssertEqual(s.key(.char("a")), [.markAllRead(eventID: event, throughSeq: 2)])
        XCTAssertEqual(s.mode, .messages)
        _ = s.key(.enter)
        XCTAssertEqual(s.key(.escape), [])
        XCTAssertEqual(s.mode, .messages)
    }

    func testAnAlarmTooLongForTheScreenScrolls() {
        let words = (1...300).map { "w\($0)" }.joined(separator: " ")
        var s = state()
        _ = s.live(message(1, words, type: .emergency), now: t0)
        var lines = WatchRenderer.render(s, now: t0, width: 80, height: 24).map(\.text)
        XCTAssertTrue(lines.contains { $0.contains("… ↓") }, lines.joined(separator: "\n"))
        XCTAssertFalse(lines.joined().contains("w300"))
        for _ in 0..<40 { _ = s.key(.down) }
        lines = WatchRenderer.render(s, now: t0, width: 80, height: 24).map(\.text)
        XCTAssertTrue(lines.joined().contains("w300"), lines.joined(separator: "\n"))
        XCTAssertNotNil(s.alarm, "scrolling does not acknowledge")
    }
}
