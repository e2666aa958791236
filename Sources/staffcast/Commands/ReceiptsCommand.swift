import ArgumentParser
import Foundation
import StaffcastClient
import StaffcastCore

struct ReceiptsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "receipts",
        abstract: "List who has read a message and who has not.",
        discussion: """
            For admins and owners of the message's event. "Not read" is everyone with
            access to the event (but the sender) who has not read it. The delivery funnel
            shows how each person was reached (live on a WebSocket, by Web Push, by email)
            and when, and the totals.

            With --watch it stays open and redraws as reads come in (live `receipt` frames
            over the WebSocket), until everyone has read it or Ctrl-C; the exit status is 0
            when everyone has read it. With --json it prints the server's JSON (with
            --watch: one object a line, on each change).

            Examples:
              ID=$(staffcast send --event $EVENT --type emergency "Evacuate hall B")
              staffcast receipts $ID
              staffcast receipts $ID --watch
              staffcast receipts $ID --json | jq '.unread_by[].display_name'
            """)

    @OptionGroup var client: ClientOptions
    @Argument(help: "The message id (printed by staffcast send).") var messageID: String
    @Flag(help: "Keep it open, redrawn as staff read, until everyone has read or Ctrl-C.") var watch = false
    @Flag(help: "Print the server's JSON instead.") var json = false
    @Flag(help: "Print who has read it as CSV (RFC 4180), for a spreadsheet.") var csv = false

    func run() throws {
        try reportingFailures {
            let id = try UUID(messageID: messageID)
            let api = try client.api()
            if csv {
                guard !watch && !json else { throw CommandFailure("--csv prints one report; leave out --watch and --json") }
                FileHandle.standardOutput.write(try api.csv("/v1/messages/\(id.uuidString.lowercased())/receipts"))
                return
            }
            let first = try api.receipts(message: id)
            let screen = !json && isatty(STDOUT_FILENO) == 1
            try LiveReport.run(
                first, watch: watch, api: api, event: { first.list.eventID },
                fetch: { try? api.receipts(message: id) },
                differs: { $0.list != $1.list }, isComplete: { $0.list.unreadBy.isEmpty },
                concerns: { if case .receipt(let r) = $0 { return r.messageID == id } else { return false } },
                show: { show($0, redraw: $1, screen: screen) })
        }
    }

    /// "  [live 10:02:03, push 10:02:04]": how the message reached the person (the funnel).
    static func reached(_ p: Receipts.Person) -> String {
        let ways = p.reached
        guard !ways.isEmpty else { return "" }
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.dateFormat = "HH:mm:ss"
        return "  [" + ways.map { "\($0.via) \(f.string(from: $0.at))" }.joined(separator: ", ") + "]"
    }

    /// "  — running late: 10 min" when the person replied (their latest reply).
    static func reply(_ p: Receipts.Person) -> String {
        guard let r = p.reply else { return "" }
        return "  — " + Strings.english.describe(r)
    }

    private func show(_ r: (list: Receipts, json: Data), redraw: Bool, screen: Bool) {
        if json { return LiveReport.writeJSONLine(r.json) }
        var out = LiveReport.redrawPrefix(redraw: redraw, screen: screen)
        let total = r.list.readBy.count + r.list.unreadBy.count
        out += "read by \(r.list.readBy.count) of \(total)\n"
        let t = r.list.totals
        out += "reached: live \(t.live) · push \(t.push) · email \(t.email) · read \(t.read)\n"
        for p in r.list.readBy {
            // As the server wrote it: a parsed time can fall a hair below its millisecond, which
            // RFC3339.format would truncate.
            out += "  ✓ \(p.displayName)\(p.readAt.map { "  \(RFC3339.format($0.addingTimeInterval(0.0005)))" } ?? "")\(Self.reached(p))\(Self.reply(p))\n"
        }
        if !r.list.unreadBy.isEmpty {
            out += "not read by \(r.list.unreadBy.count):\n"
            for p in r.list.unreadBy { out += "  · \(p.displayName)\(Self.reached(p))\(Self.reply(p))\n" }
        } else {
            out += "everyone has read it\n"
        }
        FileHandle.standardOutput.write(Data(out.utf8))
    }
}
