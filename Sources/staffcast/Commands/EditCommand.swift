import ArgumentParser
import Foundation
import StaffcastClient
import StaffcastCore

struct EditCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "edit",
        abstract: "Correct a message's text; every screen shows the correction at once.",
        discussion: """
            For the sender and the event's admins and owners. Subscribers get
            message_updated live; history and catch-up show the new text with edited_at;
            the audit keeps every version.

            Example:
              staffcast edit $MESSAGE "Gates open at gate 4 (not 3)"
            """)

    @OptionGroup var client: ClientOptions
    @Argument(help: "The message id (printed by staffcast send).") var messageID: String
    @Argument(help: "The corrected text, or - to read it from standard input.") var text: String

    func run() throws {
        try reportingFailures {
            let id = try UUID(messageID: messageID)
            var body = text
            if text == "-" {
                let data = FileHandle.standardInput.readDataToEndOfFile()
                guard let s = String(data: data, encoding: .utf8) else { throw CommandFailure("standard input is not UTF-8 text") }
                body = s.hasSuffix("\n") ? String(s.dropLast()) : s
            }
            do throws(StaffcastError) {
                try SendRequest.validateText(body)
            } catch {
                throw CommandFailure(error.message)
            }
            let edited = try client.api().editMessage(id, text: body)
            print(edited.id.uuidString.lowercased())
        }
    }
}
