import ArgumentParser
import Foundation
import StaffcastClient
import StaffcastCore

struct SendCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "send",
        abstract: "Send a message to every staff member of an event; prints the message id.",
        discussion: """
            Sends as the token's user, who must be admin or owner of the event. The id is
            printed only after the message is stored; on any failure the exit status is 1
            with a one-line reason. Then one line on standard error says whom it reached
            live, e.g.
              delivered live to 37 of 40 recipients; not connected: Sam (gate 3), Ana, Li
            (stdout holds only the id, so scripts keep working; --quiet leaves the line
            out).

            Escalation: with --escalate-after DURATION (emergencies: the server's default,
            5), staff who have not read it by then are reminded (their terminal shows it
            again and rings), and every admin and owner gets an "escalation" notification
            naming them; again each interval, at most max_escalation_rounds times (3),
            until everyone has read it.
              staffcast receipts MESSAGE_ID --watch    # who has read it, live

            Examples:
              staffcast send --event $EVENT "Gates open in 15 minutes"
              staffcast send --event $EVENT --type emergency --priority urgent \\
                "Evacuate hall B"
              staffcast send --event $EVENT --expires 30m "Shuttle bus leaves from gate 2"
              staffcast send --event $EVENT --priority urgent --escalate-after 10m \\
                "Medical team to stage 2"
              echo "Lunch is served" | staffcast send --event $EVENT -

            Later instead of now (prints the scheduled send's id; see `staffcast
            scheduled`):
              staffcast send --event $EVENT --at 2026-06-01T08:30:00Z \\
                "Doors open in 30 minutes"
              staffcast send --event $EVENT --before-start 2h "Briefing at the main stage"

            A poll (staff answer with keys 1-6 in staffcast watch; see staffcast answers
            ID):
              staffcast send --event $EVENT --poll "Yes,No" "Is there water at your gate?"
              staffcast send --event $EVENT --poll safe --priority urgent "Are you safe?"

            Only to some teams or zones of the event (staffcast team), and its admins and
            owners:
              staffcast send --event $EVENT --team Security --team Medical \\
                "Fight at gate 3"

            A template of the event (staffcast template create) instead of a text:
              staffcast send --event $EVENT --template gates-open

            The same text to the same event again within the server's
            duplicate_window_minutes (default 10) is refused so that two organisers do not
            both announce it; --force sends it anyway.
            """)

    @OptionGroup var target: EventOptions
    @OptionGroup var kind: MessageKindOptions
    @Option(help: ArgumentHelp("Send at this time instead of now (RFC 3339, e.g. 2026-06-01T08:30:00Z).", valueName: "time"))
    var at: String?
    @Option(name: .customLong("before-start"),
            help: ArgumentHelp("Send this long before the event's start instead of now: 1d, 2h or 30m.", valueName: "duration"))
    var beforeStart: String?
    @Flag(help: "Send even if the same text went to this event within the duplicate window.") var force = false
    @Option(name: .customLong("escalate-after"), help: ArgumentHelp(
        "Remind non-readers and tell admins after this long, and again each interval: 10m, 1h or a number of minutes (up to 24h; emergencies default to the server's setting, 5m).",
        valueName: "duration"))
    var escalateAfterValue: MinutesArgument?
    private var escalateAfter: Int? { escalateAfterValue?.minutes }
    @Flag(help: "Do not print the delivery line on standard error.") var quiet = false
    @Option(help: ArgumentHelp("Send the event's template of this name instead of MESSAGE (see staffcast template).",
                               valueName: "name"))
    var template: String?
    @Option(name: .customLong("team"), help: ArgumentHelp(
        "Send only to this team or zone of the event (repeatable); its admins and owners get it too.", valueName: "name"))
    var teams: [String] = []
    @Option(help: ArgumentHelp("""
        Ask a question: 2 to 6 comma-separated options ("Yes,No"), or "safe" for the safety check \
        ("I am safe", "I need help": each "I need help" notifies the event's admins and owners at once).
        """, valueName: "options"))
    var poll: String?
    @Argument(help: "The message, or - to read it from standard input (none with --template).") var message: String?

    func run() throws {
        try reportingFailures {
            let eventID = try target.eventID()
            var pollOptions: [String]?
            if let poll {
                do throws(StaffcastError) {
                    pollOptions = try Poll.parse(poll).options
                } catch {
                    throw CommandFailure("--poll: " + error.message)
                }
            }
            if let template {
                guard pollOptions == nil else { throw CommandFailure("--poll asks a question with its own text; not with --template") }
                guard message == nil else { throw CommandFailure("give --template NAME or a MESSAGE, not both") }
                guard at == nil && beforeStart == nil else {
                    throw CommandFailure("--template sends now; schedule a template's text with --at and the text itself")
                }
                do throws(StaffcastError) {
                    _ = try SendRequest.byTemplate(eventID: eventID, name: template, messageType: kind.type, priority: kind.priority,
                                                   expiresInMinutes: kind.expiresInMinutes, escalateAfterMinutes: escalateAfter)
                } catch {
                    throw CommandFailure(error.message)
                }
                // --escalate-after was dropped here: a template emergency sent with it never escalated.
                let sent = try target.api().sendTemplate(event: eventID, name: template, type: kind.type, priority: kind.priority,
                                                         expiresInMinutes: kind.expiresInMinutes, force: force, teams: teams,
                                                         escalateAfterMinutes: escalateAfter)
                print(sent.id.uuidString.lowercased())
                return
            }
            guard let message else { throw CommandFailure("give the MESSAGE to send (or - to read it from standard input, or --template NAME)") }
            var text = message
            if message == "-" {
                let data = FileHandle.standardInput.readDataToEndOfFile()
                guard let s = String(data: data, encoding: .utf8) else { throw CommandFailure("standard input is not UTF-8 text") }
                text = s.hasSuffix("\n") ? String(s.dropLast()) : s
            }
            // Validate here too, so a mistake is explained without a round trip.
            let schedule: SendSchedule?
            do throws(StaffcastError) {
                _ = try kind.request(event: eventID, text: text, escalateAfterMinutes: escalateAfter)
                schedule = try SendSchedule.from(sendAt: at, beforeStart: beforeStart)
                _ = try SendRequest(eventID: eventID, message: "-").withTeams(teams)
            } catch {
                throw CommandFailure(error.message.replacingOccurrences(of: "send_at", with: "--at")
                    .replacingOccurrences(of: "before_start", with: "--before-start"))
            }
            if schedule != nil {
                if escalateAfter != nil {
                    throw CommandFailure("--escalate-after applies to a message sent now; a scheduled emergency gets the server's default escalation when it is sent")
                }
                guard pollOptions == nil else { throw CommandFailure("--poll is for a message sent now, not with --at or --before-start") }
                let scheduled = try target.api().scheduleMessage(event: eventID, message: text, type: kind.type, priority: kind.priority,
                                                                 expiresInMinutes: kind.expiresInMinutes, sendAt: at, beforeStart: beforeStart,
                                                                 teams: teams)
                print(scheduled.id.uuidString.lowercased())
                printError("scheduled for \(RFC3339.format(scheduled.sendAt)) (staffcast scheduled list --event \(scheduled.eventID.uuidString.lowercased()); cancel with staffcast scheduled cancel ID)")
                return
            }
            let api = try target.api()
            let sent: StaffMessage
            do {
                sent = try api.sendMessage(event: eventID, message: text, type: kind.type, priority: kind.priority,
                                           expiresInMinutes: kind.expiresInMinutes, force: force, escalateAfterMinutes: escalateAfter,
                                           teams: teams, poll: pollOptions)
            } catch ClientError.timeout {
                // The request reached the server: it may be stored once a slow database answers.
                printError("staffcast: the server did not answer in time; the message may still have been stored. "
                           + "Check with `staffcast history --event \(eventID.uuidString.lowercased())` before sending it again.")
                throw ExitStatus.of(ClientError.timeout).exitCode
            }
            print(sent.id.uuidString.lowercased())
            fflush(nil)
            guard !quiet else { return }
            // The message is stored whatever happens now: a failure here changes no exit status.
            do {
                printError(try api.reach(event: eventID, teams: teams).deliveryLine(excluding: sent.senderID))
            } catch {
                printError("staffcast: sent; reach unknown (\(error))")
            }
        }
    }
}
