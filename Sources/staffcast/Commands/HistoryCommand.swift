import ArgumentParser
import Foundation
import StaffcastClient
import StaffcastCore

struct HistoryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history",
        abstract: "Search an event's messages, the archive included; a readable table or --json.",
        discussion: """
            Lists the newest matching messages (oldest first): time, sender, type,
            priority, text. Every filter is optional and they combine. Expired messages
            stay stored: --include-expired finds them too (they never come back to live
            lists or unread counts). Retracted messages are never listed. Any level on the
            event may search it.

            Examples:
              staffcast history --event $EVENT
              staffcast history --event $EVENT --search "gate" --type alert
              staffcast history --event $EVENT --include-expired --from \\
                2026-06-01T00:00:00Z --to 2026-06-08T00:00:00Z
              staffcast history --event $EVENT --sender "Olivia" --json
            """)

    @OptionGroup var target: EventOptions
    @Option(help: ArgumentHelp("Text the message contains (any case).", valueName: "text")) var search: String?
    @Option(name: .long, help: ArgumentHelp("broadcast, alert or emergency.", valueName: "type")) var type: String?
    @Option(help: ArgumentHelp("low, normal, high or urgent.", valueName: "priority")) var priority: String?
    @Option(help: ArgumentHelp("Sender: a user id, or part of a display name.", valueName: "sender")) var sender: String?
    @Option(help: ArgumentHelp("Sent at or after this time (RFC 3339).", valueName: "time")) var from: String?
    @Option(help: ArgumentHelp("Sent at or before this time (RFC 3339).", valueName: "time")) var to: String?
    @Flag(name: .customLong("include-expired"), help: "Include expired messages (the archive).") var includeExpired = false
    @Option(help: ArgumentHelp("At most this many messages (1 to 200, default 50).", valueName: "n")) var limit: Int?
    @Flag(help: "Print the JSON answer ({\"messages\": [...], \"more\": bool}) instead of a table.") var json = false

    func run() throws {
        try reportingFailures {
            let eventID = try target.eventID()
            var query: [String: String] = ["include_expired": includeExpired ? "true" : "false"]
            if let search { query["q"] = search }
            if let type { query["type"] = type }
            if let priority { query["priority"] = priority }
            if let sender { query["sender"] = sender }
            if let from { query["from"] = from }
            if let to { query["to"] = to }
            if let limit { query["limit"] = String(limit) }
            // The server's own rules, so a mistake is explained without a round trip.
            do throws(StaffcastError) {
                _ = try MessageSearch(query: query)
            } catch {
                throw CommandFailure(error.message.replacingOccurrences(of: "q ", with: "--search "))
            }
            let page = try target.api().searchMessages(event: eventID, query: query)
            if json {
                return try JSONOutput.print(page)
            }
            if page.messages.isEmpty {
                print("No messages match.")
                return
            }
            let now = Date()
            print(TextTable.render(header: ["SENT", "FROM", "TYPE", "PRIORITY", "MESSAGE"], rows: page.messages.map { m in
                var text = TextTable.oneLine(m.message, max: 80)
                if m.isExpired(at: now) { text = "(expired) " + text }
                return [Self.shortTime(m.sentAt), m.senderName, m.messageType.rawValue, m.priority.rawValue, text]
            }))
            if page.more {
                print("… older matches exist: narrow the search (--from, --search) or raise --limit.")
            }
        }
    }

    /// `2026-06-01 08:30` in UTC.
    static func shortTime(_ date: Date) -> String {
        let text = RFC3339.format(date)
        return String(text.prefix(16)).replacingOccurrences(of: "T", with: " ")
    }
}
