import ArgumentParser
import Foundation
import StaffcastClient
import StaffcastCore

struct SendCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "send",
        abstract: "Send a message to every staff member of an event; prints the message id.",
        discussion: """
            Sends as the token's user, who must be admin or owner of the event. The id is printed only
            after the message is stored; on any failure the exit status is 1 with a one-line reason.

            Examples:
              staffcast send --event $EVENT "Gates open in 15 minutes"
              staffcast send --event $EVENT --type emergency --priority urgent "Evacuate hall B"
              staffcast send --event $EVENT --expires 30 "Shuttle bus leaves from gate 2"
              echo "Lunch is served" | staffcast send --event $EVENT -

            Later instead of now (prints the scheduled send's id; see `staffcast scheduled`):
              staffcast send --event $EVENT --at 2026-06-01T08:30:00Z "Doors open in 30 minutes"
              staffcast send --event $EVENT --before-start 2h "Briefing at the main stage"

            The same text to the same event again within the server's duplicate_window_minutes
            (default 10) is refused so that two organisers do not both announce it; --force sends
            it anyway.
            """)

    @OptionGroup var client: ClientOptions
    @Option(help: "Event id.") var event: String
    @Option(name: .long, help: ArgumentHelp("broadcast (default), alert or emergency.", valueName: "type")) var type: String?
    @Option(help: ArgumentHelp("low, normal (default), high or urgent.", valueName: "priority")) var priority: String?
    @Option(help: ArgumentHelp("Minutes until the message expires (1 to 43200).", valueName: "minutes")) var expires: Int?
    @Option(help: ArgumentHelp("Send at this time instead of now (RFC 3339, e.g. 2026-06-01T08:30:00Z).", valueName: "time"))
    var at: String?
    @Option(name: .customLong("before-start"),
            help: ArgumentHelp("Send this long before the event's start instead of now: 1d, 2h or 30m.", valueName: "duration"))
    var beforeStart: String?
    @Flag(help: "Send even if the same text went to this event within the duplicate window.") var force = false
    @Argument(help: "The message, or - to read it from standard input.") var message: String

    func run() throws {
        try reportingFailures {
            guard let eventID = UUID(uuidString: event) else { throw CommandFailure("--event '\(event)' is not a UUID") }
            var text = message
            if message == "-" {
                let data = FileHandle.standardInput.readDataToEndOfFile()
                guard let s = String(data: data, encoding: .utf8) else { throw CommandFailure("standard input is not UTF-8 text") }
                text = s.hasSuffix("\n") ? String(s.dropLast()) : s
            }
            // Validate here too, so a mistake is explained without a round trip.
            let schedule: SendSchedule?
            do throws(StaffcastError) {
                _ = try SendRequest(eventID: eventID, message: text, messageType: type, priority: priority, expiresInMinutes: expires)
                schedule = try SendSchedule.from(sendAt: at, beforeStart: beforeStart)
            } catch {
                throw CommandFailure(error.message.replacingOccurrences(of: "send_at", with: "--at")
                    .replacingOccurrences(of: "before_start", with: "--before-start"))
            }
            if schedule != nil {
                let scheduled = try client.api().scheduleMessage(event: eventID, message: text, type: type, priority: priority,
                                                                 expiresInMinutes: expires, sendAt: at, beforeStart: beforeStart)
                print(scheduled.id.uuidString.lowercased())
                printError("scheduled for \(RFC3339.format(scheduled.sendAt)) (staffcast scheduled list --event \(event); cancel with staffcast scheduled cancel ID)")
                return
            }
            let sent = try client.api().sendMessage(event: eventID, message: text, type: type, priority: priority,
                                                    expiresInMinutes: expires, force: force)
            print(sent.id.uuidString.lowercased())
        }
    }
}
