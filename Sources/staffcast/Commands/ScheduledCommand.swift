import ArgumentParser
import Foundation
import StaffcastClient
import StaffcastCore

struct ScheduledCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scheduled",
        abstract: "List or cancel an event's scheduled sends (admins and owners).",
        discussion: """
            Scheduled sends are made with `staffcast send --at TIME`, `staffcast send
            --before-start 2h` or `staffcast remind`. Each is pending until its time, then
            sent (late: sent after its time because every server was down), or
            cancelled (with the reason when the server cancelled it: its sender lost
            access, or its teams were deleted or had no one in them at its time).

            Examples:
              staffcast scheduled list --event $EVENT
              staffcast scheduled cancel 5f0c…
            """,
        subcommands: [List.self, Cancel.self])

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Every scheduled send of an event, by time: id, time, status, text.")
        @OptionGroup var listing: EventListing

        func run() throws {
            try reportingFailures {
                try listing.show("scheduled", fetch: { try $0.scheduled(event: $1) }, none: "No scheduled sends for this event.",
                                 header: ["ID", "SEND AT", "STATUS", "TYPE", "PRIORITY", "MESSAGE"]) { s in
                    [s.id.uuidString.lowercased(), RFC3339.format(s.sendAt), s.status.rawValue + (s.late ? " (late)" : "") + (s.note.map { " (\($0))" } ?? ""),
                     s.messageType.rawValue, s.priority.rawValue, TextTable.oneLine(s.message, max: 60)]
                }
            }
        }
    }

    struct Cancel: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Cancel a pending scheduled send; prints its id.")
        @OptionGroup var client: ClientOptions
        @Argument(help: "The scheduled send's id.") var id: String

        func run() throws {
            try reportingFailures {
                guard let scheduledID = UUID(uuidString: id) else { throw CommandFailure("'\(id)' is not a UUID") }
                let s = try client.api().cancelScheduled(scheduledID)
                print(s.id.uuidString.lowercased())
            }
        }
    }
}
