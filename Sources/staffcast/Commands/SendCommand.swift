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
            """)

    @OptionGroup var client: ClientOptions
    @Option(help: "Event id.") var event: String
    @Option(name: .long, help: ArgumentHelp("broadcast (default), alert or emergency.", valueName: "type")) var type: String?
    @Option(help: ArgumentHelp("low, normal (default), high or urgent.", valueName: "priority")) var priority: String?
    @Option(help: ArgumentHelp("Minutes until the message expires (1 to 43200).", valueName: "minutes")) var expires: Int?
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
            do throws(StaffcastError) {
                _ = try SendRequest(eventID: eventID, message: text, messageType: type, priority: priority, expiresInMinutes: expires)
            } catch {
                throw CommandFailure(error.message)
            }
            let sent = try client.api().sendMessage(event: eventID, message: text, type: type, priority: priority,
                                                    expiresInMinutes: expires)
            print(sent.id.uuidString.lowercased())
        }
    }
}
