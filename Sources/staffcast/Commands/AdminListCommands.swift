import ArgumentParser
import Foundation
import StaffcastCore
import StaffcastPostgres

struct EventListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list", abstract: "List events: id, start, name, and how many owners, admins and staff have access.",
        discussion: """
            Examples:
              staffcast admin event list
              staffcast admin event list --json | jq -r \\
                '.[] | select(.name == "Summer Festival") | .id'
            """)

    @Flag(help: "Print one JSON array.") var json = false
    @OptionGroup var database: DatabaseOptions

    func run() throws {
        try reportingFailures {
            let events = try AdminCommand.withStore(database) { try $0.events() }
            if json { return try JSONOutput.print(events) }
            guard !events.isEmpty else { return printError("no events yet: staffcast admin event create --name NAME") }
            print(TextTable.render(header: ["ID", "STARTS", "OWNERS", "ADMINS", "STAFF", "NAME"], rows: events.map {
                [$0.id.uuidString.lowercased(), $0.startsAt.map(RFC3339.format) ?? "-", "\($0.owners)", "\($0.admins)", "\($0.staff)", $0.name]
            }))
        }
    }
}

struct EventSetCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "set", abstract: "Rename an event or set (or clear) when it starts.",
        discussion: """
            The start is what `remind --before-start` and `send --before-start` count back
            from, when they are scheduled: moving the start later does not move sends
            already scheduled (it says how many there are; cancel and schedule them again).
            Examples:
              staffcast admin event set --event $EVENT --starts-at 2026-07-01T10:00:00Z
              staffcast admin event set --event $EVENT --name "Summer Festival 2026"
              staffcast admin event set --event $EVENT --starts-at none
            """)

    @Option(help: "Event id.") var event: String
    @Option(help: "The new name.") var name: String?
    @Option(help: ArgumentHelp("When it starts (RFC 3339, e.g. 2026-07-01T10:00:00Z), or \"none\".", valueName: "time"))
    var startsAt: String?
    @OptionGroup var database: DatabaseOptions

    func run() throws {
        try reportingFailures {
            let e = try UUID(option: "--event", event)
            guard name != nil || startsAt != nil else { throw CommandFailure("give --name NAME and/or --starts-at TIME") }
            var starts: Date?
            let clear = startsAt == "none"
            if let startsAt, !clear {
                guard let d = RFC3339.parse(startsAt) else {
                    throw CommandFailure("--starts-at '\(startsAt)' is not RFC 3339 (e.g. 2026-07-01T10:00:00Z) or none")
                }
                starts = d
            }
            let pending = try AdminCommand.withStore(database) { store -> Int in
                try store.updateEvent(e, name: name, startsAt: starts, clearStart: clear)
                return startsAt == nil ? 0 : try store.pendingScheduledCount(event: e)
            }
            printError("event \(event.lowercased()) updated")
            if pending > 0 {
                printError("""
                    staffcast: note: \(pending) scheduled send\(pending == 1 ? " is" : "s are") still at \(pending == 1 ? "its" : "their") \
                    old time: a --before-start time is fixed when it is scheduled. See them with \
                    `staffcast scheduled list --event \(event.lowercased())`; cancel and schedule again to follow the new start.
                    """)
            }
        }
    }
}

struct UserListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list", abstract: "List users: id, name, events they have access to, tokens that still work.",
        discussion: """
            Examples:
              staffcast admin user list
              staffcast admin user list --event $EVENT --json
            """)

    @Option(help: "Only users with access to this event.") var event: String?
    @Flag(help: "Print one JSON array.") var json = false
    @OptionGroup var database: DatabaseOptions

    func run() throws {
        try reportingFailures {
            let eventID = try event.map { try UUID(option: "--event", $0) }
            let users = try AdminCommand.withStore(database) { try $0.users(event: eventID) }
            if json { return try JSONOutput.print(users) }
            guard !users.isEmpty else { return printError("no users yet: staffcast admin user create --name NAME") }
            print(TextTable.render(header: ["ID", "EVENTS", "TOKENS", "NAME"], rows: users.map {
                [$0.id.uuidString.lowercased(), "\($0.events)", "\($0.activeTokens)", $0.name]
            }))
        }
    }
}
