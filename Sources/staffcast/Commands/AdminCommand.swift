import ArgumentParser
import Foundation
import Logging
import StaffcastCore
import StaffcastPostgres

struct AdminCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "admin",
        abstract: "Set up events, users, access and tokens (works on the database directly).",
        discussion: """
            Admin commands find the database exactly as `serve` does (--database-url, --data-dir,
            STAFFCAST_DATABASE_URL, STAFFCAST_DATA_DIR, --config), embedded cluster included.
            Ids are printed alone on stdout, so they can be captured. Examples:
              EVENT=$(staffcast admin event create --name "Summer Festival" --starts-at 2026-07-01T10:00:00Z)
              ALICE=$(staffcast admin user create --name "Alice (gate 3)")
              staffcast admin grant --event $EVENT --user $ALICE --level staff
              staffcast admin token issue --user $ALICE > alice.token && chmod 600 alice.token
            """,
        subcommands: [EventCommand.self, UserCommand.self, GrantCommand.self, RevokeCommand.self, TokenCommand.self,
                      DemoCommand.self, AuditCommand.self])

    /// Opens the database, runs `body` with a store, and stops a cluster started for it.
    static func withStore<T>(_ database: DatabaseOptions, _ body: (Store) throws -> T) throws -> T {
        let file = try database.loadConfigFile()
        let (target, logger) = try database.open(applicationName: "staffcast admin", file: file)
        defer { target.release(onlyIfStartedHere: true, logger: logger) }
        return try body(Store(try PGConnection(conninfo: target.conninfo)))
    }
}

struct EventCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "event", abstract: "Create events.", subcommands: [EventCreateCommand.self])
}

struct EventCreateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "create", abstract: "Create an event; prints its id alone on stdout.",
        discussion: "Example: staffcast admin event create --name \"Summer Festival\" --starts-at 2026-07-01T10:00:00Z")

    @Option(help: "The event's name, as staff will see it.") var name: String
    @Option(help: ArgumentHelp("When it starts (RFC 3339, e.g. 2026-07-01T10:00:00Z).", valueName: "time")) var startsAt: String?
    @OptionGroup var database: DatabaseOptions

    func run() throws {
        try reportingFailures {
            var starts: Date?
            if let startsAt {
                guard let d = RFC3339.parse(startsAt) else {
                    throw CommandFailure("--starts-at '\(startsAt)' is not RFC 3339 (e.g. 2026-07-01T10:00:00Z)")
                }
                starts = d
            }
            let id = try AdminCommand.withStore(database) { try $0.createEvent(name: name, startsAt: starts) }
            print(id.uuidString.lowercased())
        }
    }
}

struct UserCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "user", abstract: "Create users.", subcommands: [UserCreateCommand.self])
}

struct UserCreateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "create", abstract: "Create a user; prints their id alone on stdout.",
        discussion: "Example: staffcast admin user create --name \"Alice (gate 3)\"")

    @Option(help: "The name others see next to their messages and in receipts.") var name: String
    @OptionGroup var database: DatabaseOptions

    func run() throws {
        try reportingFailures {
            let id = try AdminCommand.withStore(database) { try $0.createUser(name: name) }
            print(id.uuidString.lowercased())
        }
    }
}

extension AccessLevel: ExpressibleByArgument {}

struct GrantCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "grant", abstract: "Give a user access to an event (or change their level).",
        discussion: """
            Levels: staff reads and marks read; admin and owner also send, see receipts and notify.
            Example: staffcast admin grant --event $EVENT --user $ALICE --level staff
            """)

    @Option(help: "Event id.") var event: String
    @Option(help: "User id.") var user: String
    @Option(help: "staff, admin or owner.") var level: AccessLevel
    @OptionGroup var database: DatabaseOptions

    func run() throws {
        try reportingFailures {
            let (e, u) = try ids(event, user)
            try AdminCommand.withStore(database) { try $0.grant(event: e, user: u, level: level) }
            printError("granted \(level.rawValue) on event \(event) to user \(user)")
        }
    }
}

struct RevokeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "revoke", abstract: "End a user's access to an event; live subscriptions end within 2 s.",
        discussion: "Example: staffcast admin revoke --event $EVENT --user $ALICE")

    @Option(help: "Event id.") var event: String
    @Option(help: "User id.") var user: String
    @OptionGroup var database: DatabaseOptions

    func run() throws {
        try reportingFailures {
            let (e, u) = try ids(event, user)
            let removed = try AdminCommand.withStore(database) { try $0.revoke(event: e, user: u) }
            printError(removed ? "revoked access of user \(user) to event \(event)" : "user \(user) had no access to event \(event)")
        }
    }
}

struct TokenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token", abstract: "Issue API tokens.", subcommands: [TokenIssueCommand.self])
}

struct TokenIssueCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "issue", abstract: "Issue a token for a user; prints it alone on stdout, once.",
        discussion: """
            Only a hash of the token is stored: save it now, it cannot be shown again.
            Example: staffcast admin token issue --user $ALICE > alice.token && chmod 600 alice.token
            """)

    @Option(help: "User id.") var user: String
    @Option(help: "A note for whom or what the token is.") var label: String?
    @OptionGroup var database: DatabaseOptions

    func run() throws {
        try reportingFailures {
            guard let u = UUID(uuidString: user) else { throw CommandFailure("--user '\(user)' is not a UUID") }
            let token = try AdminCommand.withStore(database) { try $0.issueToken(user: u, label: label) }
            print(token)
        }
    }
}

private func ids(_ event: String, _ user: String) throws -> (UUID, UUID) {
    guard let e = UUID(uuidString: event) else { throw CommandFailure("--event '\(event)' is not a UUID") }
    guard let u = UUID(uuidString: user) else { throw CommandFailure("--user '\(user)' is not a UUID") }
    return (e, u)
}

struct AuditCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "audit", abstract: "List grants, revokes and token issues, newest first.",
        discussion: """
            Every grant, revoke and token issue is recorded with the operating-system user who ran it.
            Examples:
              staffcast admin audit
              staffcast admin audit --event $EVENT --limit 20 --json
            """)

    @Option(help: "Only this event's entries.") var event: String?
    @Option(help: "How many entries (default 100).") var limit = 100
    @Flag(help: "One JSON object per line.") var json = false
    @OptionGroup var database: DatabaseOptions

    func run() throws {
        try reportingFailures {
            var eventID: UUID?
            if let event {
                guard let e = UUID(uuidString: event) else { throw CommandFailure("--event '\(event)' is not a UUID") }
                eventID = e
            }
            let entries = try AdminCommand.withStore(database) { try $0.auditLog(limit: limit, event: eventID) }
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            for e in entries {
                if json, let data = try? encoder.encode(e) {
                    print(String(decoding: data, as: UTF8.self))
                } else {
                    print("\(e.at)  \(e.actor.padding(toLength: 10, withPad: " ", startingAt: 0))  \(e.action.padding(toLength: 11, withPad: " ", startingAt: 0))  event \(e.eventID ?? "-")  user \(e.userID ?? "-")\(e.detail.map { "  \($0)" } ?? "")")
                }
            }
        }
    }
}
