import ArgumentParser
import Foundation
import StaffcastPostgres

struct UserSetCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "set", abstract: "Change a user's email address.",
        discussion: """
            An urgent or emergency message a user has not read after email_after_seconds
            (default 60) is emailed to this address once, when smtp_url and email_from are
            configured (docs/operations.md). An empty --email "" removes the address.

            Examples:
              staffcast admin user set --user $ALICE --email alice@example.org
              staffcast admin user set --user $ALICE --email ""
            """)

    @Option(help: "User id.") var user: String
    @Option(help: ArgumentHelp("Their email address (\"\" removes it).", valueName: "address")) var email: String
    @OptionGroup var database: DatabaseOptions

    func run() throws {
        try reportingFailures {
            let id = try UUID(option: "--user", user)
            try AdminCommand.withStore(database) { try $0.setEmail(user: id, email: email) }
            printError(email.isEmpty ? "removed the email address of user \(user)" : "user \(user) now has the email address \(email)")
        }
    }
}
