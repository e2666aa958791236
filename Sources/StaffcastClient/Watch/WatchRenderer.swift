import Foundation
import StaffcastCore

/// One styled run of text on the screen.
public struct Segment: Equatable {
    public enum Style: Equatable {
        case plain, bar, badge, dim, selected, warning, help
        case priority(Priority)
    }
    public var text: String
    public var style: Style
    public init(_ text: String, _ style: Style = .plain) {
        self.text = text
        self.style = style
    }
}

/// One screen row: segments whose widths add up to the screen width.
public struct ScreenLine: Equatable {
    public var segments: [Segment]
    public var text: String { segments.map(\.text).joined() }
}

/// The screen as a pure function of `WatchState`, the clock and the terminal size.
/// Top bar, banners, the list (newest first), and a key line at the bottom.
public enum WatchRenderer {
    public static func render(_ state: WatchState, now: Date, width: Int, height: Int) -> [ScreenLine] {
        let width = max(20, width), height = max(5, height)
        let t = state.strings
        var lines: [ScreenLine] = [topBar(state, now: now, width: width)]
        if let alarm = state.alarm {
            // An emergency or urgent message takes the whole screen until acknowledged.
            lines += alarmPanel(state, alarm.message, round: alarm.round, width: width, rows: height - 2)
            lines.append(alarmFooter(state, width: width))
            return lines
        }
        switch state.mode {
        case .help:
            lines += help(width, t)
        case .notifications:
            lines += notifications(state, now: now, width: width, rows: height - 2)
        case .events:
            lines += events(state, width: width, rows: height - 2)
        case .detail:
            if let m = state.detailMessage {
                lines += detail(state, m, now: now, width: width, rows: height - 2)
                lines = Array(lines.prefix(height - 1))
                while lines.count < height - 1 { lines.append(ScreenLine(segments: [Segment(String(repeating: " ", count: width))])) }
                lines.append(detailFooter(state, width: width, height: height))
                return lines
            }
            lines += list(state, now: now, width: width, rows: height - 2)
        case .messages:
            let bannerLines = state.banners.suffix(3).reversed().map { banner(state, $0, width: width) }
            lines += bannerLines
            lines += list(state, now: now, width: width, rows: height - 2 - bannerLines.count)
        }
        while lines.count < height - 1 { lines.append(ScreenLine(segments: [Segment(String(repeating: " ", count: width))])) }
        lines = Array(lines.prefix(height - 1))
        lines.append(footer(state, width: width))
        return lines
    }

    static func topBar(_ state: WatchState, now: Date, width: Int) -> ScreenLine {
        let t = state.strings
        let connection: String
        switch state.connection {
        case .connecting: connection = t[.connecting]
        case .connected: connection = t[.connected]
        case .reconnecting(let at): connection = t.text(.reconnectingIn, max(0, Int(at.timeIntervalSince(now).rounded(.up))))
        case .offline(let why): connection = t.text(.offline, ["reason": why])
        }
        let badge = t.text(.unread, state.unreadCount)
        let pending = state.toAcknowledge.count
        let notes = (pending > 0 ? t.text(.toAcknowledge, pending) : "")
            + (state.unreadNotifications > 0 ? " ✉ \(state.unreadNotifications) " : "")
        let right = " \(connection) "
        let title = " staffcast · \(state.eventName.isEmpty ? "…" : state.eventName)"
        let fixed = TextWidth.columns(badge) + TextWidth.columns(notes) + TextWidth.columns(right)
        let left = TextWidth.pad(title, max(0, width - fixed))
        var segments = [Segment(left, .bar), Segment(right, .bar), Segment(badge, state.unreadCount > 0 ? .badge : .bar)]
        if !notes.isEmpty { segments.append(Segment(notes, .badge)) }
        return ScreenLine(segments: clip(segments, width))
    }

    static func banner(_ state: WatchState, _ b: WatchState.Banner, width: Int) -> ScreenLine {
        let m = b.message
        let t = state.strings
        let head = " \(t.name(m.messageType)) · \(t.name(m.priority)) · \(m.senderName) \(clock(m.sentAt)) "
        let tail = b.sticky ? t[.dismiss] : ""
        let edited = m.editedAt == nil ? "" : " (edited)"
        let body = TextWidth.pad(" " + oneLine(m.message) + edited, max(0, width - TextWidth.columns(head) - TextWidth.columns(tail)))
        return ScreenLine(segments: clip([Segment(head, .priority(m.priority)), Segment(body, .priority(m.priority)),
                                          Segment(tail, .priority(m.priority))], width))
    }

    /// The alarm: red from top to bottom, the message in full, and how to acknowledge it.
    static func alarmPanel(_ state: WatchState, _ m: StaffMessage, round: Int?, width: Int, rows: Int) -> [ScreenLine] {
        guard rows > 0 else { return [] }
        let style = Segment.Style.priority(.urgent)
        func line(_ text: String) -> ScreenLine { ScreenLine(segments: clip([Segment(TextWidth.pad(text, width), style)], width)) }
        var out: [ScreenLine] = []
        let t = state.strings
        var head = " \(t.name(m.messageType)) · \(t.name(m.priority)) · \(m.senderName) \(clock(m.sentAt))"
        if let round { head += t.text(.alarmReminder, round) }
        if m.editedAt != nil { head += " (edited)" }
        out.append(line(head))
        out.append(line(""))
        let body = wrap(m.message, width: max(1, width - 4))
        let room = max(1, rows - 6)
        // A text longer than the panel scrolls (↑↓) so it can be read in full before Shift+A.
        let first = min(state.alarmScroll, max(0, body.count - room))
        let shown = Array(body.dropFirst(first))
        for text in shown.prefix(body.count - first > room ? room - 1 : room) { out.append(line("   " + text)) }
        if body.count - first > room { out.append(line("   … ↓")) }
        if m.poll != nil { out.append(line("   " + pollLine(m))) }
        out.append(line(""))
        out.append(line(t[.alarmPress]))
        let waiting = state.alarms.count - 1
        if waiting > 0 { out.append(line(t.text(.alarmMore, waiting))) }
        while out.count < rows { out.append(line("")) }
        return Array(out.prefix(rows))
    }

    static func alarmFooter(_ state: WatchState, width: Int) -> ScreenLine {
        let text = state.status ?? state.strings[.alarmFooter]
        return ScreenLine(segments: clip([Segment(TextWidth.pad(text, width), .bar)], width))
    }

    /// Splits text into lines of at most `width` columns (at spaces where it can).
    public static func wrap(_ text: String, width: Int) -> [String] {
        var out: [String] = []
        let paragraphs = text.replacingOccurrences(of: "\r", with: "").replacingOccurrences(of: "\t", with: " ")
            .split(separator: "\n", omittingEmptySubsequences: false)
        for paragraph in paragraphs {
            var current = ""
            var used = 0
            for word in paragraph.split(separator: " ", omittingEmptySubsequences: false) {
                let w = TextWidth.columns(String(word))
                if current.isEmpty && used == 0 && w <= width {
                    current = String(word)
                    used = w
                } else if used + 1 + w <= width {
                    current += " " + word
                    used += 1 + w
                } else {
                    if used > 0 || !current.isEmpty { out.append(current) }
                    current = ""
                    used = 0
                    // A word longer than a line is cut, character by character.
                    for c in word {
                        let cw = TextWidth.columns(c)
                        if used + cw > width {
                            out.append(current)
                            current = ""
                            used = 0
                        }
                        current.append(c)
                        used += cw
                    }
                }
            }
            out.append(current)
        }
        return out
    }

    static func list(_ state: WatchState, now: Date, width: Int, rows: Int) -> [ScreenLine] {
        guard rows > 0 else { return [] }
        if state.messages.isEmpty {
            return [ScreenLine(segments: [Segment(TextWidth.pad(state.strings[.noMessages], width), .dim)])]
        }
        // Keep the selection in view (and, at the oldest message, the line below it that says
        // whether older ones are loading or there are none).
        let note = state.loadingOlder || state.olderExhausted
        let first = max(0, state.selected - rows + 1 + (note && state.selected >= state.messages.count - 1 ? 1 : 0))
        var out: [ScreenLine] = []
        for row in first..<min(state.messages.count, first + rows) {
            guard let m = state.message(atRow: row) else { break }
            out.append(listRow(m, now: now, width: width, selected: row == state.selected, state.strings))
        }
        // Below the oldest loaded message: whether older ones are on their way or there are none.
        if out.count < rows, first + out.count == state.messages.count, note {
            let note = state.loadingOlder ? state.strings[.olderLoading] : state.strings[.olderEnd]
            out.append(ScreenLine(segments: [Segment(TextWidth.pad(note, width), .dim)]))
        }
        return out
    }

    /// A poll's options with their keys, the chosen one marked: "[1 Yes · 2 No ✓]".
    static func pollLine(_ m: StaffMessage) -> String {
        guard let poll = m.poll else { return "" }
        let options = poll.options.enumerated().map { i, o in "\(i + 1) \(o)\(m.answer == i ? " ✓" : "")" }
        return "[" + options.joined(separator: " · ") + "]"
    }

    static func listRow(_ m: StaffMessage, now: Date, width: Int, selected: Bool, _ t: Strings = .english) -> ScreenLine {
        // "!": an emergency or urgent message still to acknowledge.
        let dot = m.read ? "  " : (m.mustBeAcknowledged ? "! " : "● ")
        let ago = TextWidth.pad(timeAgo(now.timeIntervalSince(m.sentAt), t), agoColumns(t))
        let badge = "[\(t.name(m.priority))]"
        var warning = ""
        if let expires = m.expiresAt, expires.timeIntervalSince(now) <= WatchState.expiryWarning {
            warning = t.text(.expiresIn, ["d": duration(expires.timeIntervalSince(now), t)])
        }
        let textWidth = max(0, width - TextWidth.columns(dot) - TextWidth.columns(ago) - TextWidth.columns(badge) - 1
                            - TextWidth.columns(warning))
        // A poll's options come before its text, so that a narrow screen cuts the question, not the keys.
        let options = m.poll == nil ? "" : pollLine(m) + " "
        let text = TextWidth.pad(" \(m.senderName): \(options)\(oneLine(m.message))\(m.editedAt == nil ? "" : " (edited)")", textWidth)
        if selected {
            return ScreenLine(segments: clip([Segment(dot + ago + badge + " " + text + warning, .selected)], width))
        }
        var segments = [Segment(dot, .badge), Segment(ago, .dim), Segment(badge, .priority(m.priority)), Segment(" " + text)]
        if !warning.isEmpty { segments.append(Segment(warning, .warning)) }
        return ScreenLine(segments: clip(segments, width))
    }

    static func notifications(_ state: WatchState, now: Date, width: Int, rows: Int) -> [ScreenLine] {
        let t = state.strings
        var out = [ScreenLine(segments: [Segment(TextWidth.pad(t[.notificationsTitle], width), .help)])]
        if state.notifications.isEmpty {
            out.append(ScreenLine(segments: [Segment(TextWidth.pad(t[.noNotifications], width), .dim)]))
        }
        for (i, n) in state.notifications.prefix(max(0, rows - 1)).enumerated() {
            let text = (n.read ? "  " : "● ") + TextWidth.pad(timeAgo(now.timeIntervalSince(n.createdAt), t), agoColumns(t)) + "\(n.title): \(oneLine(n.message))"
            out.append(ScreenLine(segments: [Segment(TextWidth.pad(text, width), i == state.notificationSelected ? .selected : .plain)]))
        }
        return out
    }

    static func events(_ state: WatchState, width: Int, rows: Int) -> [ScreenLine] {
        let t = state.strings
        var out = [ScreenLine(segments: [Segment(TextWidth.pad(t[.eventsTitle], width), .help)])]
        if state.events.isEmpty {
            out.append(ScreenLine(segments: [Segment(TextWidth.pad(t[.loading], width), .dim)]))
        }
        for (i, e) in state.events.prefix(max(0, rows - 1)).enumerated() {
            let mark = e.id == state.eventID ? "▸ " : "  "
            out.append(ScreenLine(segments: [Segment(TextWidth.pad("\(mark)\(e.name)  (\(t.name(e.accessLevel)))", width),
                                                     i == state.eventSelected ? .selected : .plain)]))
        }
        return out
    }

    static func help(_ width: Int, _ t: Strings = .english) -> [ScreenLine] {
        [t[.help1], t[.help2], t[.help3], t[.help4], t[.helpReply1], t[.helpReply2], t[.help5], t[.help6], t[.help7], t[.help8],
         t[.help9], "", t[.help10], t[.help11], t[.help12], t[.help13]]
            .map { ScreenLine(segments: [Segment(TextWidth.pad($0, width), .help)]) }
    }

    static func footer(_ state: WatchState, width: Int) -> ScreenLine {
        let t = state.strings
        let wide = t[.footerWide]
        let text = state.status ?? (TextWidth.columns(wide) <= width ? wide : t[.footerNarrow])
        return ScreenLine(segments: [Segment(TextWidth.pad(text, width), .bar)])
    }

    // MARK: text helpers

    /// "now", "45s ago", "3m ago", "2h ago", "4d ago" (in Turkish "şimdi", "45sn önce", …).
    public static func timeAgo(_ seconds: TimeInterval, _ t: Strings = .english) -> String {
        let s = max(0, Int(seconds))
        if s < 10 { return t[.now] }
        return t.text(.ago, ["d": duration(TimeInterval(s), t)])
    }

    /// "45s", "4m", "2h", "3d" (in Turkish "45sn", "4dk", "2sa", "3g").
    public static func duration(_ seconds: TimeInterval, _ t: Strings = .english) -> String {
        let s = max(0, Int(seconds.rounded(.up)))
        if s < 60 { return t.text(.seconds, s) }
        if s < 3_600 { return t.text(.minutes, s / 60) }
        if s < 86_400 { return t.text(.hours, s / 3_600) }
        return t.text(.days, s / 86_400)
    }

    /// Columns of the "time ago" column: "59m ago " / "59dk önce ".
    static func agoColumns(_ t: Strings) -> Int { t.language == .tr ? 10 : 8 }

    static func clock(_ date: Date) -> String {
        let c = Calendar.current.dateComponents([.hour, .minute], from: date)
        return String(format: "%02d:%02d", c.hour ?? 0, c.minute ?? 0)
    }

    static func oneLine(_ s: String) -> String {
        s.replacingOccurrences(of: "\r", with: " ").replacingOccurrences(of: "\n", with: " ").replacingOccurrences(of: "\t", with: " ")
    }

    /// Cuts segments so that together they take at most `width` columns.
    static func clip(_ segments: [Segment], _ width: Int) -> [Segment] {
        var out: [Segment] = []
        var used = 0
        for s in segments {
            let w = TextWidth.columns(s.text)
            if used + w <= width {
                out.append(s)
                used += w
            } else {
                let rest = width - used
                if rest > 0 { out.append(Segment(TextWidth.pad(TextWidth.fit(s.text, rest), rest), s.style)) }
                break
            }
        }
        return out
    }
}
