import Foundation
import StaffcastCore

/// The detail view: one message in full at any size (80x24 included), with who sent it, when,
/// how many have read it, and its whole text wrapped and scrolled.
extension WatchRenderer {
    /// Rows of the view above the text: type and priority, sender, time and counts, a rule.
    static let detailHeadRows = 4

    /// Rows left for the text on a screen `height` rows high (top bar and footer excluded).
    public static func detailBodyRows(height: Int) -> Int { max(1, max(5, height) - 2 - detailHeadRows) }

    /// The text of the detail message, wrapped to the width (one space each side).
    public static func detailBody(_ state: WatchState, width: Int) -> [String] {
        guard let m = state.detailMessage else { return [] }
        return wrap(m.message, width: max(1, max(20, width) - 2))
    }

    static func detail(_ state: WatchState, _ m: StaffMessage, now: Date, width: Int, rows: Int) -> [ScreenLine] {
        let t = state.strings
        func line(_ text: String, _ style: Segment.Style = .plain) -> ScreenLine {
            ScreenLine(segments: clip([Segment(TextWidth.pad(text, width), style)], width))
        }
        var facts = [" \(t[.detailSent]): \(fullTime(m.sentAt)) (\(timeAgo(now.timeIntervalSince(m.sentAt), t)))",
                     t.text(.detailReadBy, m.readCount)]
        if let expires = m.expiresAt { facts.append(t.text(.expiresIn, ["d": duration(expires.timeIntervalSince(now), t)]).trimmingCharacters(in: .whitespaces)) }
        if m.editedAt != nil { facts.append(t[.detailEdited]) }
        var out = [line(" \(t.name(m.messageType)) · \(t.name(m.priority))", .priority(m.priority)),
                   line(" \(t[.detailFrom]): \(m.senderName)"),
                   line(facts.joined(separator: " · ")),
                   line(String(repeating: "─", count: width), .dim)]
        let body = detailBody(state, width: width)
        let room = max(0, rows - out.count)
        let first = min(state.detailScroll, max(0, body.count - room))
        for text in body.dropFirst(first).prefix(room) { out.append(line(" " + text)) }
        return Array(out.prefix(rows))
    }

    static func detailFooter(_ state: WatchState, width: Int, height: Int) -> ScreenLine {
        let t = state.strings
        let body = detailBody(state, width: width)
        let room = detailBodyRows(height: height)
        var right = ""
        if body.count > room {
            let first = min(state.detailScroll, body.count - room)
            right = t.text(.detailLines, ["from": String(first + 1), "to": String(min(body.count, first + room)), "n": String(body.count)])
        }
        let left = state.status ?? t[.detailFooter]
        let text = TextWidth.pad(left, max(0, width - TextWidth.columns(right))) + right
        return ScreenLine(segments: clip([Segment(TextWidth.pad(text, width), .bar)], width))
    }

    /// "2026-06-01 09:30" in local time.
    static func fullTime(_ date: Date) -> String {
        let c = Calendar.current.dateComponents([.year, .month, .day, .hour, .minute], from: date)
        return String(format: "%04d-%02d-%02d %02d:%02d", c.year ?? 0, c.month ?? 0, c.day ?? 0, c.hour ?? 0, c.minute ?? 0)
    }
}
