import ArgumentParser
import Foundation
import StaffcastClient
import StaffcastCore

struct ScheduledCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scheduled",
        abstract: "List or cancel an event's scheduled sends (admins and owners).",
        discussion: """
            Scheduled sends are made with `staffcast send --at TIME`, `staffcast send --before-start 2h`
            or `staffcast remind`. Each is pending until its time, then sent (late: sent after its
            time because every server was down), or cancelled.

            Examples:
              staffcast scheduled list --event $EVENT
              staffcast scheduled cancel 5f0c…
            """,
        subcommands: [List.self, Cancel.self])

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Every scheduled send of an event, by time: id, time, status, text.")
        @OptionGroup var client: ClientOptions
        @Option(help: "Event id.") var event: String
        @Flag(help: "Print the JSON list instead of a table.") var json = false

        func run() throws {
            try reportingFailures {
                let eventID = try UUID(option: "--event", event)
                let list = try client.api().scheduled(event: eventID)
                if json {
                    let encoder = JSONEncoder()
                    encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
                    print(String(decoding: try encoder.encode(["scheduled": list]), as: UTF8.self))
                    return
                }
                if list.isEmpty {
                    print("No scheduled sends for this event.")
                    return
                }
                print(TextTable.render(header: ["ID", "SEND AT", "STATUS", "TYPE", "PRIORITY", "MESSAGE"], rows: list.map { s in
                    var status = s.status.rawValue
                    if s.late { status += " (late)" }
                    return [s.id.uuidString.lowercased(), RFC3339.format(s.sendAt), status, s.messageType.rawValue,
                            s.priority.rawValue, TextTable.oneLine(s.message, max: 60)]
                }))
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
