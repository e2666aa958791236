import ArgumentParser
import Foundation
import StaffcastPostgres

struct UserDeleteCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "delete", abstract: "Delete a user: their tokens, access and notifications; their sessions end within 2 s.",
        discussion: """
            Every server closes the user's open WebSockets (code 4401) and refuses their
            tokens within 2 s. Their scheduled sends that have not gone out are cancelled.
            Messages, scheduled sends and templates they made stay in history under their
            name (the profile is then kept, marked deleted); nothing can be granted to or
            issued for a deleted user. Recorded in `staffcast admin audit`.

            Example:
              staffcast admin user delete --user $ALICE
            """)

    @Option(help: "User id.") var user: String
    @OptionGroup var database: DatabaseOptions

    func run() throws {
        try reportingFailures {
            let id = try UUID(option: "--user", user)
            let done = try AdminCommand.withStore(database) { try $0.deleteUser(id) }
            printError("deleted user \(user): \(done.tokens) token\(done.tokens == 1 ? "" : "s") and access to \(done.events) event\(done.events == 1 ? "" : "s") removed"
                       + (done.scheduledCancelled > 0 ? "; \(done.scheduledCancelled) scheduled send\(done.scheduledCancelled == 1 ? "" : "s") of theirs cancelled" : "")
                       + (done.keptAsSender ? "; the profile stays (marked deleted) as the author of messages, schedules or templates in history" : ""))
        }
    }
}
