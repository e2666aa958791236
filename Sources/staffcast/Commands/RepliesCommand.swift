import ArgumentParser
import Foundation
import StaffcastClient
import StaffcastCore

struct RepliesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replies",
        abstract: "Each staff member's latest reply to a message (admins and owners).",
        discussion: """
            Staff answer a message from the terminal client (keys 1-4 in staffcast watch:
            on my way, running late, cannot make it, done) or with the WebSocket op reply
            (also custom, with a short text). Organisers subscribed to the event see each
            reply live; this lists them.

            Example:
              staffcast replies $MESSAGE
            """)

    @OptionGroup var client: ClientOptions
    @Argument(help: "The message id.") var messageID: String
    @Flag(help: "Print the JSON list instead of a table.") var json = false
    @Flag(help: "Print the replies as CSV (RFC 4180) instead.") var csv = false

    func run() throws {
        try reportingFailures {
            let id = try UUID(messageID: messageID)
            if csv {
                FileHandle.standardOutput.write(try client.api().csv("/v1/messages/\(id.uuidString.lowercased())/replies"))
                return
            }
            let replies = try client.api().replies(id)
            if json {
                return try JSONOutput.print(["replies": replies])
            }
            if replies.isEmpty {
                print("No replies yet.")
                return
            }
            print(TextTable.render(header: ["WHO", "REPLY", "WHEN"], rows: replies.map { r in
                [r.displayName, r.status == .custom ? (r.text ?? "") : r.status.label + (r.text.map { ": \($0)" } ?? ""),
                 HistoryCommand.shortTime(r.repliedAt)]
            }))
        }
    }
}
