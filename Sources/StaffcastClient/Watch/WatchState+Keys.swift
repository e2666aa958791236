import Foundation
import StaffcastCore

/// What each key does, by what the screen shows: an alarm takes every key but Shift+A (and
/// scrolling its text); the detail view scrolls and answers the message it shows; the list
/// moves, opens and pages back through history. Pure, like the rest of `WatchState`.
extension WatchState {
    public enum Key: Equatable {
        case up, down, pageUp, pageDown, enter, char(Character), escape, interrupt, resize
    }

    /// The keys that answer the message on screen (the detail view, or the selected row).
    public static let replyKeys: [Character: Reply.Status] = ["1": .onMyWay, "2": .runningLate, "3": .cannotMakeIt, "4": .done]

    /// When the selection comes this close to the oldest loaded message, the page before it is asked for.
    public static let prefetchRows = 5
    /// Rows moved by PgUp / PgDn in the list.
    public static let pageRows = 10

    public mutating func key(_ key: Key) -> [WatchEffect] {
        if let (m, _) = alarm { return alarmKey(key, m) }
        if mode == .detail { return detailKey(key) }
        // A note in the footer ("Acknowledged…", "Replied…") stays until the next key.
        if key != .resize { status = nil }
        switch (mode, key) {
        case (_, .interrupt), (.messages, .char("q")):
            return [.quit]
        case (.help, _), (.notifications, .char("q")), (.events, .char("q")), (.notifications, .escape), (.events, .escape):
            mode = .messages
            return []
        case (_, .char("?")):
            mode = .help
        case (.messages, .char("n")):
            mode = .notifications
            notificationSelected = 0
        case (.messages, .char("e")):
            mode = .events
            return [.listEvents]
        case (.messages, .up), (.messages, .char("k")):
            selected = max(0, selected - 1)
        case (.messages, .pageUp):
            selected = max(0, selected - Self.pageRows)
        case (.messages, .down), (.messages, .char("j")):
            selected = min(max(0, messages.count - 1), selected + 1)
            return olderIfNear()
        case (.messages, .pageDown):
            selected = min(max(0, messages.count - 1), selected + Self.pageRows)
            return olderIfNear()
        case (.messages, .enter):
            // Opens the selected message in full; reading it in full marks it read.
            guard let m = message(atRow: selected) else { return [] }
            mode = .detail
            detailID = m.id
            detailScroll = 0
            return m.read || m.senderID == user?.userID ? [] : [.markRead(m.id)]
        case (.messages, .char(let c)) where message(atRow: selected).flatMap({ Self.pollOption(c, of: $0) }) != nil:
            // A poll: keys 1-6 answer it (instead of replying).
            guard let m = message(atRow: selected), let option = Self.pollOption(c, of: m) else { return [] }
            answered(messageID: m.id, option: option)
            return [.answer(m.id, option)]
        case (.messages, .char(let c)) where c.isNumber && message(atRow: selected)?.poll != nil:
            // On a poll, digits are its options only (no status reply by mistake).
            return []
        case (.messages, .char(let c)) where Self.replyKeys[c] != nil:
            // Answer the selected message (the organisers subscribed to the event see it live).
            guard let m = message(atRow: selected), let status = Self.replyKeys[c] else { return [] }
            return [.reply(m.id, status)]
        case (.messages, .char("a")):
            // One request for all (never one per message: that would trip the server's limit).
            guard let through = messages.map(\.seq).max() else { return [] }
            return [.markAllRead(eventID: eventID, throughSeq: through)]
        case (.messages, .char("d")), (.messages, .escape):
            // Dismissing a banner does not mark its message read.
            if !banners.isEmpty { banners.removeFirst() }
        case (.notifications, .up), (.notifications, .char("k")):
            notificationSelected = max(0, notificationSelected - 1)
        case (.notifications, .down), (.notifications, .char("j")):
            notificationSelected = min(max(0, notifications.count - 1), notificationSelected + 1)
        case (.notifications, .enter):
            guard notifications.indices.contains(notificationSelected), !notifications[notificationSelected].read else { return [] }
            return [.markNotificationRead(notifications[notificationSelected].id)]
        case (.events, .up), (.events, .char("k")):
            eventSelected = max(0, eventSelected - 1)
        case (.events, .down), (.events, .char("j")):
            eventSelected = min(max(0, events.count - 1), eventSelected + 1)
        case (.events, .enter):
            guard events.indices.contains(eventSelected) else { return [] }
            let target = events[eventSelected]
            mode = .messages
            return target.id == eventID ? [] : [.switchEvent(target)]
        default:
            break
        }
        return []
    }

    /// An alarm holds the screen: only the acknowledge key (or Ctrl-C) acts; arrows scroll a
    /// long text. Once acknowledged, the list selects that message, so the reply keys and
    /// Enter act on it (the message just acknowledged), not on a row that was selected before.
    private mutating func alarmKey(_ key: Key, _ m: StaffMessage) -> [WatchEffect] {
        switch key {
        case .interrupt:
            return [.quit]
        case .char(Self.acknowledgeKey):
            alarms.removeAll { $0.messageID == m.id }
            banners.removeAll { $0.message.id == m.id }
            alarmScroll = 0
            mode = .messages
            if let i = messages.firstIndex(where: { $0.id == m.id }) { selected = messages.count - 1 - i }
            status = strings[.acknowledged]
            return [.markRead(m.id)]
        case .up, .char("k"):
            alarmScroll = max(0, alarmScroll - 1)
        case .down, .char("j"):
            alarmScroll = min(alarmScroll + 1, max(0, alarmBodyRows(m) - 1))
        case .resize:
            break
        case .char(let c) where Self.pollOption(c, of: m) != nil:
            // A poll holding the screen ("Are you safe?"): an answer acknowledges it.
            guard let option = Self.pollOption(c, of: m) else { return [] }
            alarms.removeAll { $0.messageID == m.id }
            banners.removeAll { $0.message.id == m.id }
            alarmScroll = 0
            mode = .messages
            status = nil
            answered(messageID: m.id, option: option)
            return [.answer(m.id, option)]
        default:
            status = strings[.alarmHint]
        }
        return []
    }

    private mutating func detailKey(_ key: Key) -> [WatchEffect] {
        guard let id = detailID, messages.contains(where: { $0.id == id }) else {
            mode = .messages
            return self.key(key)
        }
        let page = max(1, WatchRenderer.detailBodyRows(height: screenHeight))
        let last = max(0, WatchRenderer.detailBody(self, width: screenWidth).count - page)
        switch key {
        case .interrupt:
            return [.quit]
        case .up, .char("k"):
            detailScroll = max(0, detailScroll - 1)
        case .down, .char("j"):
            detailScroll = min(last, detailScroll + 1)
        case .pageUp:
            detailScroll = max(0, detailScroll - page)
        case .pageDown, .char(" "):
            detailScroll = min(last, detailScroll + page)
        case .escape, .enter, .char("q"):
            mode = .messages
        case .char(let c) where Self.replyKeys[c] != nil:
            guard let status = Self.replyKeys[c] else { return [] }
            return [.reply(id, status)]
        case .resize:
            detailScroll = min(detailScroll, last)
        default:
            // Any other key is the list's (a, n, e, ?…): back to the list and do it there.
            mode = .messages
            return self.key(key)
        }
        return []
    }

    /// Rows of the alarm's text at the current width.
    private func alarmBodyRows(_ m: StaffMessage) -> Int {
        WatchRenderer.wrap(m.message, width: max(1, screenWidth - 4)).count
    }

    /// The page before the oldest loaded message, when the selection nears it.
    private mutating func olderIfNear() -> [WatchEffect] {
        guard !loadingOlder, !olderExhausted, let floor = historyFloor, selected >= messages.count - Self.prefetchRows else { return [] }
        loadingOlder = true
        return [.loadOlder(eventID: eventID, beforeSeq: floor)]
    }

    /// The message the detail view shows (nil when it left: retracted or expired).
    public var detailMessage: StaffMessage? {
        guard mode == .detail, let id = detailID else { return nil }
        return messages.first { $0.id == id }
    }
}
