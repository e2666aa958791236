import Foundation
import StaffcastClient
import StaffcastCore
import XCTest

final class WatchStateTests: WatchStateTestCase {

    func testBannersTimeOutExceptUrgentWhichStayUntilAcknowledged() {
        var s = state()
        XCTAssertEqual(s.live(message(1, priority: .normal), now: t0), [])
        XCTAssertEqual(s.live(message(2, priority: .urgent), now: t0), [.bell])
        XCTAssertEqual(s.live(message(3, priority: .high, type: .emergency), now: t0), [.bell])
        XCTAssertEqual(s.banners.count, 3)
        s.tick(now: t0.addingTimeInterval(4.9))
        XCTAssertEqual(s.banners.count, 3)
        s.tick(now: t0.addingTimeInterval(5))
        XCTAssertEqual(s.banners.map(\.message.seq), [2])
        s.tick(now: t0.addingTimeInterval(600))
        XCTAssertEqual(s.banners.map(\.message.seq), [2], "urgent stays")
        // The urgent and the emergency hold the screen: d dismisses nothing while they do.
        XCTAssertEqual(s.key(.char("d")), [])
        XCTAssertEqual(s.banners.map(\.message.seq), [2])
        XCTAssertEqual(s.key(.char(WatchState.acknowledgeKey)), [.markRead(s.messages[1].id)])
        XCTAssertTrue(s.banners.isEmpty, "acknowledging takes its banner away")
        XCTAssertEqual(s.key(.char(WatchState.acknowledgeKey)), [.markRead(s.messages[2].id)])
        XCTAssertNil(s.alarm)
        XCTAssertEqual(s.unreadCount, 3, "until the server confirms the reads")
    }

    func testAnEmergencyHoldsTheScreenUntilTheDeliberateKey() {
        var s = state()
        let evacuate = message(1, "Evacuate hall B", priority: .normal, type: .emergency)
        _ = s.live(evacuate, now: t0)
        XCTAssertEqual(s.alarm?.message.id, evacuate.id)
        XCTAssertNil(s.alarm?.round)
        // Keys pressed by habit do nothing but say how to acknowledge.
        for key: WatchState.Key in [.enter, .char(" "), .char("a"), .char("d"), .char("q"), .escape, .char("n"), .char("1")] {
            XCTAssertEqual(s.key(key), [], "\(key)")
        }
        XCTAssertEqual(s.mode, .messages)
        XCTAssertTrue(s.status?.contains("Shift+A") == true)
        XCTAssertEqual(s.toAcknowledge.map(\.id), [evacuate.id])
        // Ctrl-C still quits.
        var copy = s
        XCTAssertEqual(copy.key(.interrupt), [.quit])
        XCTAssertEqual(s.key(.char("A")), [.markRead(evacuate.id)])
        XCTAssertNil(s.alarm)
        XCTAssertTrue(s.status?.contains("Acknowledged") == true)
        s.read(messageID: evacuate.id, eventID: event, unreadCount: 0)
        XCTAssertTrue(s.toAcknowledge.isEmpty)
        // Normal keys work again.
        XCTAssertEqual(s.key(.char("q")), [.quit])
    }

    func testItRingsEveryFewSecondsUntilAcknowledged() {
        var s = state()
        XCTAssertEqual(s.ring(now: t0), [], "nothing to ring for")
        _ = s.live(message(1, priority: .urgent), now: t0)
        XCTAssertEqual(s.ring(now: t0.addingTimeInterval(1)), [], "it just rang")
        XCTAssertEqual(s.ring(now: t0.addingTimeInterval(WatchState.bellInterval)), [.bell])
        XCTAssertEqual(s.ring(now: t0.addingTimeInterval(WatchState.bellInterval + 1)), [])
        XCTAssertEqual(s.ring(now: t0.addingTimeInterval(2 * WatchState.bellInterval)), [.bell])
        _ = s.key(.char("A"))
        XCTAssertEqual(s.ring(now: t0.addingTimeInterval(60)), [])
    }

    func testAReminderBringsAMessageBackUntilItIsRead() {
        var s = state()
        let evacuate = message(1, "Evacuate hall B", type: .emergency)
        _ = s.live(evacuate, now: t0)
        _ = s.key(.char("A")) // acknowledged here, but the mark never reached the server
        XCTAssertNil(s.alarm)
        XCTAssertEqual(s.reminder(evacuate, round: 1, now: t0.addingTimeInterval(300)), [.bell])
        XCTAssertEqual(s.alarm?.message.id, evacuate.id)
        XCTAssertEqual(s.alarm?.round, 1)
        // A reminder of a plain message the user never saw: it takes the screen too.
        let plain = message(2, "Check in at the desk")
        XCTAssertEqual(s.reminder(plain, round: 2, now: t0.addingTimeInterval(301)), [.bell])
        XCTAssertEqual(s.messages.map(\.seq), [1, 2])
        XCTAssertEqual(s.alarms.map(\.messageID), [evacuate.id, plain.id])
        // The server's read reply ends an alarm, whichever way the mark was made.
        s.read(messageID: evacuate.id, eventID: event, unreadCount: 1)
        XCTAssertEqual(s.alarm?.message.id, plain.id)
        XCTAssertEqual(s.key(.char("A")), [.markRead(plain.id)])
        s.read(messageID: plain.id, eventID: event, unreadCount: 0)
        // A reminder of something already read, or of another event, changes nothing.
        XCTAssertEqual(s.reminder(s.messages[0], round: 3, now: t0), [])
        var elsewhere = message(3, type: .emergency)
        elsewhere.eventID = UUID()
        XCTAssertEqual(s.reminder(elsewhere, round: 1, now: t0), [])
        XCTAssertNil(s.alarm)
    }

    func testUnreadEmergenciesFromBeforeTakeTheScreenOnSubscribeButNotOnesSentByMe() {
        var s = WatchState(eventID: event)
        s.connected(me)
        var mine = message(3, "My own emergency", type: .emergency)
        mine.senderID = me.userID
        s.subscribed(EventSummary(id: event, name: "Fest", startsAt: nil, accessLevel: .admin),
                     history: [message(1, "Old, read", priority: .urgent, read: true), message(2, "Fire at gate 4", type: .emergency),
                               mine, message(4, "Coffee")], unreadCount: 2)
        XCTAssertEqual(s.alarms.map(\.messageID), [s.messages[1].id])
        XCTAssertEqual(s.toAcknowledge.map(\.seq), [2])
    }

    func testUnreadCountsFollowTheServer() {
        var s = state()
        _ = s.live(message(1), now: t0)
        _ = s.live(message(2), now: t0)
        XCTAssertEqual(s.unreadCount, 2)
        // Enter on the top row (newest) asks to mark it read; the server's reply sets the count.
        let effects = s.key(.enter)
        XCTAssertEqual(effects, [.markRead(s.messages[1].id)])
        s.read(messageID: s.messages[1].id, eventID: event, unreadCount: 1)
        XCTAssertEqual(s.unreadCount, 1)
        XCTAssertTrue(s.messages[1].read)
        XCTAssertEqual(s.key(.enter), [], "already read")
        XCTAssertEqual(s.key(.char("a")), [.markAllRead(eventID: event, throughSeq: 2)], "one request, not one per message")
        // A live duplicate (same id) changes nothing.
        let dup = s.messages[0]
        XCTAssertEqual(s.live(dup, now: t0), [])
        XCTAssertEqual(s.messages.count, 2)
    }

    /// `watch` restores unacknowledged urgent messages over HTTP while it subscribes. One
    /// committed after the subscribe's snapshot is found by that restore first and then arrives
    /// live: it is counted once (the clean-clone `make test` caught "1 unread" for two).
    func testAnUrgentMessageRestoredBeforeItArrivesLiveIsCountedOnce() {
        var s = state() // subscribed: nothing yet, 0 unread
        let urgent = message(1, priority: .urgent)
        s.restore([urgent])
        XCTAssertEqual(s.unreadCount, 0)
        _ = s.live(urgent, now: t0)
        _ = s.live(message(2, priority: .normal), now: t0)
        XCTAssertEqual(s.unreadCount, 2)
        _ = s.live(urgent, now: t0) // a duplicate still changes nothing
        XCTAssertEqual(s.unreadCount, 2)
        // Restored before the subscribe's snapshot, which counted it: not counted again.
        var t = WatchState(eventID: event)
        t.connected(me)
        let early = message(3, priority: .urgent)
        t.restore([early])
        t.subscribed(EventSummary(id: event, name: "Fest", startsAt: nil, accessLevel: .staff), history: [early], unreadCount: 1)
        _ = t.live(early, now: t0)
        XCTAssertEqual(t.unreadCount, 1)
    }

    func testOrderingMovingAndExpiry() {
        var s = state()
        s.subscribed(EventSummary(id: event, name: "Fest", startsAt: nil, accessLevel: .staff),
                     history: [message(3), message(1, expiresAt: t0.addingTimeInterval(60)), message(2)], unreadCount: 3)
        XCTAssertEqual(s.messages.map(\.seq), [1, 2, 3])
        XCTAssertEqual(s.message(atRow: 0)?.seq, 3, "newest first on screen")
        _ = s.key(.down); _ = s.key(.char("j")); _ = s.key(.char("j"))
        XCTAssertEqual(s.selected, 2)
        _ = s.key(.up)
        XCTAssertEqual(s.selected, 1)
        s.tick(now: t0.addingTimeInterval(61))
        XCTAssertEqual(s.messages.map(\.seq), [2, 3], "expired messages leave the list")
    }

    func testModesAndQuit() {
        var s = state()
        _ = s.key(.char("?"))
        XCTAssertEqual(s.mode, .help)
        _ = s.key(.char("x"))
        XCTAssertEqual(s.mode, .messages)
        XCTAssertEqual(s.key(.char("e")), [.listEvents])
        let other = EventSummary(id: UUID(), name: "Other", startsAt: nil, accessLevel: .staff)
        s.events = [EventSummary(id: event, name: "Fest", startsAt: nil, accessLevel: .staff), other]
        _ = s.key(.down)
        XCTAssertEqual(s.key(.enter), [.switchEvent(other)])
        s.switched(to: other)
        XCTAssertEqual(s.eventName, "Other")
        XCTAssertTrue(s.messages.isEmpty)
        _ = s.key(.char("n"))
        XCTAssertEqual(s.mode, .notifications)
        let n = StaffNotification(id: UUID(), userID: me.userID, type: "t", title: "Break", message: "now", data: nil,
                                  read: false, readAt: nil, createdAt: t0)
        s.notification(n)
        XCTAssertEqual(s.unreadNotifications, 1)
        XCTAssertEqual(s.key(.enter), [.markNotificationRead(n.id)])
        s.notificationRead(n.id)
        XCTAssertEqual(s.unreadNotifications, 0)
        _ = s.key(.escape)
        XCTAssertEqual(s.key(.char("q")), [.quit])
        XCTAssertEqual(s.key(.interrupt), [.quit])
    }
}

final class WatchRendererTests: XCTestCase {
    let event = UUID()
    let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    func render(_ s: WatchState, width: Int = 80, height: Int = 24, now: Date? = nil) -> [ScreenLine] {
        WatchRenderer.render(s, now: now ?? t0, width: width, height: height)
    }

    func message(_ seq: Int64, _ text: String, priority: Priority = .normal, sentAt: Date? = nil, expiresAt: Date? = nil) -> StaffMessage {
        StaffMessage(id: UUID(), seq: seq, eventID: event, senderID: UUID(), senderName: "Olivia", message: text,
                     messageType: .alert, priority: priority, sentAt: sentAt ?? t0, expiresAt: expiresAt, read: false, readCount: 0)
    }

    func testEveryLineFillsTheWidthExactlyIncludingWideCharacters() {
        var s = WatchState(eventID: event)
        s.subscribed(EventSummary(id: event, name: "Fête de la Musique 音楽祭 🎵", startsAt: nil, accessLevel: .staff),
                     history: [message(1, "Café ouvert — 東京ゲート 🚪 open"), message(2, String(repeating: "长", count: 100))],
                     unreadCount: 2)
        _ = s.live(message(3, "Évacuez la salle B 🚨", priority: .urgent), now: t0)
        for (w, h) in [(80, 24), (40, 10), (120, 40), (24, 6)] {
            let lines = render(s, width: w, height: h)
            XCTAssertEqual(lines.count, h)
            for line in lines {
                XCTAssertEqual(TextWidth.columns(line.text), w, "width \(w): '\(line.text)'")
            }
        }
    }

    func testTopBarBannerListAndFooter() {
        var s = WatchState(eventID: event)
        s.connected(Identity(userID: UUID(), displayName: "Sam"))
        s.subscribed(EventSummary(id: event, name: "Fest", startsAt: nil, accessLevel: .staff),
                     history: [message(1, "Gates open", sentAt: t0.addingTimeInterval(-180), expiresAt: t0.addingTimeInterval(240))],
                     unreadCount: 1)
        _ = s.live(message(2, "Evacuate hall B", priority: .urgent), now: t0)
        s.alarms = [] // the banner as it shows once the alarm is gone (see testTheAlarmTakesTheScreen)
        let lines = render(s)
        XCTAssertTrue(lines[0].text.contains("Fest"))
        XCTAssertTrue(lines[0].text.contains("● connected"))
        XCTAssertTrue(lines[0].text.contains("2 unread"))
        XCTAssertTrue(lines[1].text.contains("ALERT · URGENT · Olivia"))
        XCTAssertTrue(lines[1].text.contains("Evacuate hall B"))
        XCTAssertTrue(lines[1].text.contains("[d] dismiss"))
        XCTAssertEqual(lines[1].segments.first?.style, .priority(.urgent))
        XCTAssertTrue(lines[2].text.contains("! now"), "unread urgent: still to acknowledge: \(lines[2].text)")
        XCTAssertTrue(lines[3].text.contains("3m ago"), lines[3].text)
        XCTAssertTrue(lines[3].text.contains("[NORMAL]"))
        XCTAssertTrue(lines[3].text.contains("expires in 4m"), lines[3].text)
        XCTAssertTrue(lines[23].text.contains("? help"))
    }

    func testTheAlarmTakesTheScreen() {
        var s = WatchState(eventID: event)
        s.connected(Identity(userID: UUID(), displayName: "Sam"))
        s.subscribed(EventSummary(id: event, name: "Fest", startsAt: nil, accessLevel: .staff),
                     history: [message(1, "Gates open")], unreadCount: 1)
        let text = "Evacuate hall B now. Leave by the north doors and gather at the car park; stewards will count you there."
        _ = s.live(message(2, text, priority: .urgent), now: t0)
        _ = s.live(message(3, "Second alarm", priority: .urgent), now: t0)
        var lines = render(s)
        XCTAssertEqual(lines.count, 24)
        XCTAssertTrue(lines[0].text.contains("! 2 to acknowledge"), lines[0].text)
        XCTAssertTrue(lines[1].text.contains("ALERT · URGENT · Olivia"), lines[1].text)
        XCTAssertTrue(lines[1...22].allSatisfy { $0.segments.allSatisfy { $0.style == .priority(.urgent) } }, "red from top to bottom")
        let body = lines.map(\.text).joined(separator: "\n")
        XCTAssertTrue(body.contains("Evacuate hall B now. Leave by the north doors and gather at the car park;"), body)
        XCTAssertTrue(body.contains("stewards will count you there."), "the whole message, wrapped:\n\(body)")
        XCTAssertTrue(body.contains("Press Shift+A to acknowledge"), body)
        XCTAssertTrue(body.contains("1 more waiting"), body)
        XCTAssertFalse(body.contains("Gates open"), "the list is hidden")
        XCTAssertTrue(lines[23].text.contains("acknowledge"))
        for (w, h) in [(80, 24), (40, 10), (24, 6), (120, 40)] {
            for line in render(s, width: w, height: h) {
                XCTAssertEqual(TextWidth.columns(line.text), w, "width \(w): '\(line.text)'")
            }
        }
        // A reminder says so.
        _ = s.key(.char("A"))
        _ = s.key(.char("A"))
        _ = s.reminder(s.messages[1], round: 2, now: t0)
        lines = render(s)
        XCTAssertTrue(lines[1].text.contains("REMINDER 2"), lines[1].text)
        // Unread emergencies left in the list are marked "!".
        s.alarms = []
        XCTAssertTrue(render(s).contains { $0.text.hasPrefix("! ") && $0.text.contains("Evacuate hall B") })
    }

    func testWrapKeepsWordsAndCutsOnlyWhatCannotFit() {
        XCTAssertEqual(WatchRenderer.wrap("one two three", width: 7), ["one two", "three"])
        XCTAssertEqual(WatchRenderer.wrap("abcdefghij", width: 4), ["abcd", "efgh", "ij"])
        XCTAssertEqual(WatchRenderer.wrap("a\nb", width: 10), ["a", "b"])
        XCTAssertEqual(WatchRenderer.wrap("東京東京東", width: 4), ["東京", "東京", "東"])
    }

    func testConnectionStatesAndTimeAgo() {
        var s = WatchState(eventID: event)
        s.disconnected(retryAt: t0.addingTimeInterval(4.2))
        XCTAssertTrue(render(s)[0].text.contains("reconnecting in 5 s"))
        s.offline("token refused")
        XCTAssertTrue(render(s)[0].text.contains("offline"))
        XCTAssertEqual(WatchRenderer.timeAgo(3), "now")
        XCTAssertEqual(WatchRenderer.timeAgo(45), "45s ago")
        XCTAssertEqual(WatchRenderer.timeAgo(180), "3m ago")
        XCTAssertEqual(WatchRenderer.timeAgo(7_200), "2h ago")
        XCTAssertEqual(WatchRenderer.timeAgo(3 * 86_400), "3d ago")
    }

    func testTextWidth() {
        XCTAssertEqual(TextWidth.columns("abc"), 3)
        XCTAssertEqual(TextWidth.columns("東京"), 4)
        XCTAssertEqual(TextWidth.columns("é"), 1)
        XCTAssertEqual(TextWidth.columns("e\u{301}"), 1)
        XCTAssertEqual(TextWidth.columns("🚨"), 2)
        XCTAssertEqual(TextWidth.columns("👍🏽"), 2)
        XCTAssertEqual(TextWidth.columns(TextWidth.fit("東京東京", 5)), 5)
        XCTAssertEqual(TextWidth.pad("東", 3), "東 ")
    }
}

/// What the terminal client does with an edit and a retract (pure).
final class WatchStateToolboxTests: XCTestCase {
    func message(_ seq: Int64, _ event: UUID, sender: UUID = UUID(), text: String, priority: Priority = .normal) -> StaffMessage {
        StaffMessage(id: UUID(), seq: seq, eventID: event, senderID: sender, senderName: "Olivia", message: text,
                     messageType: .broadcast, priority: priority, sentAt: Date(), expiresAt: nil, read: false, readCount: 0)
    }

    func testAnEditChangesTheLineAndTheBannerAndKeepsReadState() {
        let event = UUID()
        var state = WatchState(eventID: event)
        state.connected(Identity(userID: UUID(), displayName: "Sam"))
        let m = message(1, event, text: "Gate 3", priority: .urgent)
        _ = state.live(m, now: Date())
        state.read(messageID: m.id, eventID: event, unreadCount: 0)
        var edited = m
        edited.message = "Gate 4"
        edited.editedAt = Date()
        edited.read = false // live frames say false for everyone
        state.updated(edited)
        XCTAssertEqual(state.messages.map(\.message), ["Gate 4"])
        XCTAssertEqual(state.messages.first?.read, true)
        XCTAssertNotNil(state.messages.first?.editedAt)
        XCTAssertEqual(state.banners.map(\.message.message), ["Gate 4"])
        // Another event's edit changes nothing.
        var foreign = edited
        foreign.eventID = UUID()
        foreign.message = "elsewhere"
        state.updated(foreign)
        XCTAssertEqual(state.messages.map(\.message), ["Gate 4"])
    }

    func testARetractRemovesLineBannerAndUnread() {
        let event = UUID()
        var state = WatchState(eventID: event)
        state.connected(Identity(userID: UUID(), displayName: "Sam"))
        let a = message(1, event, text: "Lunch")
        let b = message(2, event, text: "Evacuate", priority: .urgent)
        _ = state.live(a, now: Date())
        _ = state.live(b, now: Date())
        XCTAssertEqual(state.unreadCount, 2)
        state.selected = 1
        state.retracted(messageID: b.id, eventID: event)
        XCTAssertEqual(state.messages.map(\.id), [a.id])
        XCTAssertFalse(state.banners.contains { $0.message.id == b.id })
        XCTAssertEqual(state.unreadCount, 1)
        XCTAssertEqual(state.selected, 0)
        state.retracted(messageID: UUID(), eventID: event) // unknown: nothing changes
        XCTAssertEqual(state.unreadCount, 1)
    }
}
