import ArgumentParser
import Foundation
import StaffcastClient
import StaffcastCore

struct RetractCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "retract",
        abstract: "Take a message back: it leaves every screen, history, catch-up and unread counts.",
        discussion: """
            For the sender and the event's admins and owners. Subscribers get
            message_retracted live and the terminal client removes it; an emergency stops
            escalating. The audit keeps it.

            Example:
              staffcast retract $MESSAGE
            """)

    @OptionGroup var client: ClientOptions
    @Argument(help: "The message id (printed by staffcast send).") var messageID: String

    func run() throws {
        try reportingFailures {
            let id = try UUID(messageID: messageID)
            try client.api().retractMessage(id)
            print(id.uuidString.lowercased())
        }
    }
}
