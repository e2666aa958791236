import ArgumentParser
import Foundation
import StaffcastClient
import StaffcastCore

struct RemindCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remind",
        abstract: "Schedule a reminder series before an event's start in one go; prints one scheduled id a line.",
        discussion: """
            Each time in --before becomes one scheduled send of MESSAGE at that time before
            the event's starts_at (the event must have one; set it with `staffcast admin
            event create --starts-at`). Times that have already passed are refused before
            anything is stored. Each reminder is sent exactly once, even with several
            servers, and late (marked late) if every server was down at its time. List or
            cancel them with `staffcast scheduled`.

            Examples:
              staffcast remind --event $EVENT --before 1d,2h,30m \\
                "Your shift starts soon: report to the info desk"
              staffcast remind --event $EVENT --before 15m --priority high \\
                "Doors open in 15 minutes"
            """)

    @OptionGroup var target: EventOptions
    @Option(help: ArgumentHelp("Times before the start, comma-separated: e.g. 1d,2h,30m.", valueName: "times")) var before: String
    @OptionGroup var kind: MessageKindOptions
    @Argument(help: "The reminder text.") var message: String

    func run() throws {
        try reportingFailures {
            let eventID = try target.eventID()
            let leads: [LeadTime]
            do throws(StaffcastError) {
                _ = try kind.request(event: eventID, text: message)
                leads = try LeadTime.parseList(before)
            } catch {
                throw CommandFailure(error.message)
            }
            let api = try target.api()
            var done: [ScheduledMessage] = []
            for lead in leads {
                do {
                    let s = try api.scheduleMessage(event: eventID, message: message, type: kind.type, priority: kind.priority,
                                                    expiresInMinutes: kind.expiresInMinutes, sendAt: nil, beforeStart: lead.description)
                    done.append(s)
                    print(s.id.uuidString.lowercased())
                    printError("\(lead) before the start: \(RFC3339.format(s.sendAt))")
                } catch {
                    let made = done.isEmpty ? "nothing was scheduled"
                        : "the \(done.count) scheduled before it stay (staffcast scheduled cancel ID to undo)"
                    throw CommandFailure("\(lead) before the start: \(errorLine(error)); \(made)", status: ExitStatus.of(error))
                }
            }
        }
    }
}
