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
            Admin commands find the database exactly as `serve` does (--database-url,
            --data-dir, STAFFCAST_DATABASE_URL, STAFFCAST_DATA_DIR, --config), embedded
            cluster included, but never create one: on a data dir without a cluster they
            fail and say so (run `staffcast migrate` or `staffcast serve` there first, or
            pass --create). Ids are printed alone on stdout, so they can be captured.
            Examples:
              EVENT=$(staffcast admin event create --name "Summer Festival" --starts-at \\
                2026-07-01T10:00:00Z)
              ALICE=$(staffcast admin user create --name "Alice (gate 3)")
              staffcast admin grant --event $EVENT --user $ALICE --level staff
              staffcast admin token issue --user $ALICE > alice.token && chmod 600 \\
                alice.token
            """,
        subcommands: [EventCommand.self, UserCommand.self, GrantCommand.self, RevokeCommand.self, TokenCommand.self,
                      InviteCommand.self, DemoCommand.self, AuditCommand.self])

    /// Opens the database, runs `body` with a store, and stops a cluster started for it.
    static func withStore<T>(_ database: DatabaseOptions, _ body: (Store) throws -> T) throws -> T {
        let file = try database.loadConfigFile()
        // Admin commands never create a cluster (a mistyped --data-dir would become an empty new
        // staffcast whose tokens no server knows): only serve, migrate and --create do.
        let (target, logger) = try database.open(applicationName: "staffcast admin", file: file, create: false)
        defer { target.release(onlyIfStartedHere: true, logger: logger) }
        return try body(Store(try PGConnection(conninfo: target.conninfo)))
    }
}

struct EventCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "event", abstract: "Create, list and change events.",
        subcommands: [EventCreateCommand.self, EventListCommand.self, EventSetCommand.self])
}

struct EventCreateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "create", abstract: "Create an event; prints its id alone on stdout.",
        discussion: """
            Example:
              staffcast admin event create --name "Summer Festival" \\
                --starts-at 2026-07-01T10:00:00Z
            """)

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
        commandName: "user", abstract: "Create, list, change and delete users.",
        subcommands: [UserCreateCommand.self, UserListCommand.self, UserSetCommand.self, UserDeleteCommand.self])
}

struct UserCreateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "create", abstract: "Create a user; prints their id alone on stdout.",
        discussion: """
            With --email, an urgent or emergency message they have not read after
            email_after_seconds (default 60) is emailed to them once, when smtp_url and
            email_from are configured.

            Example:
              staffcast admin user create --name "Alice (gate 3)" --email alice@example.org
            """)

    @Option(help: "The name others see next to their messages and in receipts.") var name: String
    @Option(help: ArgumentHelp("Their email address, for urgent messages they have not read.", valueName: "address"))
    var email: String?
    @OptionGroup var database: DatabaseOptions

    func run() throws {
        try reportingFailures {
            let id = try AdminCommand.withStore(database) { try $0.createUser(name: name, email: email) }
            print(id.uuidString.lowercased())
        }
    }
}

extension AccessLevel: ExpressibleByArgument {}

struct GrantCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "grant", abstract: "Give a user access to an event (or change their level).",
        discussion: """
            Levels: staff reads and marks read; admin and owner also send, see receipts and
            notify.
            Example: staffcast admin grant --event $EVENT --user $ALICE --level staff
            """)

    @OptionGroup var target: GrantTarget
    @Option(help: "staff, admin or owner.") var level: AccessLevel
    @OptionGroup var database: DatabaseOptions

    func run() throws {
        try reportingFailures {
            let (e, u) = try target.ids()
            try AdminCommand.withStore(database) { try $0.grant(event: e, user: u, level: level) }
            printError("granted \(level.rawValue) on event \(target.event) to user \(target.user)")
        }
    }
}

struct RevokeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "revoke", abstract: "End a user's access to an event; live subscriptions end within 2 s.",
        discussion: "Example: staffcast admin revoke --event $EVENT --user $ALICE")

    @OptionGroup var target: GrantTarget
    @OptionGroup var database: DatabaseOptions

    func run() throws {
        try reportingFailures {
            let (e, u) = try target.ids()
            let removed = try AdminCommand.withStore(database) { try $0.revoke(event: e, user: u) }
            let (event, user) = (target.event, target.user)
            printError(removed ? "revoked access of user \(user) to event \(event)" : "user \(user) had no access to event \(event)")
        }
    }
}

struct TokenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token", abstract: "Issue, list and revoke API tokens.",
        discussion: """
            Examples:
              (umask 077; staffcast admin token issue --user $ALICE --expires 7d > a.token)
              staffcast admin token list --user $ALICE
              staffcast admin token revoke --user $ALICE
            """,
        subcommands: [TokenIssueCommand.self, TokenListCommand.self, TokenRevokeCommand.self])
}

struct TokenIssueCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "issue", abstract: "Issue a token for a user; prints it alone on stdout, once.",
        discussion: """
            Only a hash of the token is stored: save it now, it cannot be shown again.
            --expires takes a whole number of minutes, hours or days (30m, 12h, 7d; at most
            3650d); without it the token works until revoked.

            Examples:
              (umask 077; staffcast admin token issue --user $ALICE > alice.token)
              staffcast admin token issue --user $ALICE --label tablet --expires 12h
            """)

    @Option(help: "User id.") var user: String
    @Option(help: "A note for whom or what the token is (shown by `token list`).") var label: String?
    @Option(help: ArgumentHelp("How long the token works: 30m, 12h, 7d (default: until revoked).", valueName: "duration"))
    var expires: String?
    @OptionGroup var database: DatabaseOptions

    func run() throws {
        try reportingFailures {
            let u = try userID(user)
            let lifetime = try expires.map { text -> TimeInterval in
                guard let seconds = TokenLifetime.parse(text) else {
                    throw CommandFailure("--expires '\(text)' is not a duration such as 30m, 12h or 7d (at most 3650d)")
                }
                return seconds
            }
            let token = try AdminCommand.withStore(database) { try $0.issueToken(user: u, label: label, expiresIn: lifetime) }
            print(token)
            if let expires { printError("the token expires in \(expires)") }
        }
    }
}

/// `--expires` of tokens and invites: a duration (30m, 12h, 7d; no plain numbers: those options
/// never took minutes alone).
enum TokenLifetime {
    static let maxSeconds = 3650 * 86_400

    static func parse(_ text: String) -> TimeInterval? {
        DurationText.seconds(text, plainMinutes: false, maxSeconds: maxSeconds).map(TimeInterval.init)
    }
}

struct TokenListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list", abstract: "List a user's tokens: id, created, last used, expires, revoked, label.",
        discussion: """
            Never shows a token or its hash. The id names one token for `token revoke --id`
            (a lost phone's token, without having the token). Revoked and expired tokens
            are listed too.

            Examples:
              staffcast admin token list --user $ALICE
              staffcast admin token list --user $ALICE --json
            """)

    @Option(help: "User id.") var user: String
    @Flag(help: "Print one JSON array.") var json = false
    @OptionGroup var database: DatabaseOptions

    func run() throws {
        try reportingFailures {
            let u = try userID(user)
            let tokens = try AdminCommand.withStore(database) { try $0.tokens(ofUser: u) }
            if json { return try JSONOutput.print(tokens) }
            guard !tokens.isEmpty else {
                printError("user \(user) has no tokens")
                return
            }
            func time(_ d: Date?, _ none: String) -> String { d.map(RFC3339.format) ?? none }
            print(TextTable.render(header: ["ID", "CREATED", "LAST USED", "EXPIRES", "REVOKED", "STATE", "LABEL"], rows: tokens.map { t in
                [t.id.uuidString.lowercased(), time(t.createdAt, "-"), time(t.lastUsedAt, "never"), time(t.expiresAt, "never"),
                 time(t.revokedAt, "-"), t.state.rawValue, t.label ?? "-"]
            }))
        }
    }
}

struct TokenRevokeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "revoke", abstract: "Revoke all of a user's tokens, or one token.",
        discussion: """
            Within 2 s every server refuses the token and closes its open WebSockets (code
            4401). Give --user (all of that user's tokens), --id (one, by the id `token
            list` shows) or --token (one; "-" reads it from stdin, keeping it out of the
            process list and shell history). Prints how many were revoked.

            Examples:
              staffcast admin token revoke --user $ALICE
              # from `staffcast admin token list --user $ALICE`
              staffcast admin token revoke --id 5f0c…
              staffcast admin token revoke --token - < alice.token
            """)

    @Option(help: "Revoke every token of this user (id).") var user: String?
    @Option(help: ArgumentHelp("Revoke this one token (\"-\": read it from stdin).", valueName: "token")) var token: String?
    @Option(help: ArgumentHelp("Revoke the one token with this id (as `token list` shows it).", valueName: "token-id")) var id: String?
    @OptionGroup var database: DatabaseOptions

    func run() throws {
        try reportingFailures {
            if let id {
                guard user == nil && token == nil else { throw CommandFailure("give one of --user, --id and --token") }
                guard let tokenID = UUID(uuidString: id) else { throw CommandFailure("--id '\(id)' is not a token id (a UUID, see `token list`)") }
                let owner = try AdminCommand.withStore(database) { try $0.revokeToken(id: tokenID) }
                if let owner {
                    printError("revoked token \(id.lowercased()) of user \(owner.uuidString.lowercased())")
                } else {
                    printError("token \(id.lowercased()) was already revoked")
                }
                return
            }
            switch (user, token) {
            case (let user?, nil):
                let u = try userID(user)
                let count = try AdminCommand.withStore(database) { try $0.revokeTokens(user: u) }
                printError("revoked \(count) token\(count == 1 ? "" : "s") of user \(user)")
            case (nil, let token?):
                var text = token
                if token == "-" { text = readLine(strippingNewline: true) ?? "" }
                text = text.trimmingCharacters(in: .whitespacesAndNewlines)
                guard TokenHasher.looksValid(text) else {
                    throw CommandFailure("--token is not a staffcast token (sc_ and 43 more characters)")
                }
                let owner = try AdminCommand.withStore(database) { try $0.revokeToken(text) }
                if let owner {
                    printError("revoked 1 token of user \(owner.uuidString.lowercased())")
                } else {
                    printError("revoked 0 tokens: that token is unknown or was already revoked")
                }
            case (nil, nil):
                throw CommandFailure("give --user ID (all of a user's tokens), --id TOKEN_ID or --token TOKEN (one)")
            case (_?, _?):
                throw CommandFailure("give one of --user, --id and --token")
            }
        }
    }
}

private func userID(_ user: String) throws -> UUID { try UUID(option: "--user", user) }

struct AuditCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "audit", abstract: "List grants, revokes, token issues and revokes, sends, emergency reads, reminders and escalations, newest first.",
        discussion: """
            Every grant, revoke, token issue and token revoke is recorded with the
            operating-system user who ran it. Every send (message_send, by its sender),
            every read of an emergency or urgent message (message_read, by its reader),
            every reminder (one per person reminded) and every escalation (naming who had
            not read) is recorded too, in the same transaction as the act itself, so an
            organiser can show afterwards who knew what and when.
            Examples:
              staffcast admin audit
              staffcast admin audit --event $EVENT --limit 20 --json
              staffcast admin audit --event $EVENT --limit 100000 --csv > audit.csv
            (Admins and owners of an event get the same over HTTP: GET
            /v1/events/ID/audit?format=csv.)
            """)

    @Option(help: "Only this event's entries.") var event: String?
    @Option(help: "How many entries (default 100).") var limit = 100
    @Flag(help: "Print one JSON array.") var json = false
    @Flag(help: "CSV (RFC 4180) with a header row, for a spreadsheet.") var csv = false
    @OptionGroup var database: DatabaseOptions

    func run() throws {
        try reportingFailures {
            var eventID: UUID?
            if let event {
                let e = try UUID(option: "--event", event)
                eventID = e
            }
            // One more than asked: whether the log goes on past what is printed (said on stderr).
            var entries = try AdminCommand.withStore(database) { try $0.auditLog(limit: limit + 1, event: eventID) }
            if entries.count > limit {
                entries.removeLast(entries.count - limit)
                FileHandle.standardError.write(Data("staffcast: only the newest \(limit) entries; there are older ones (raise --limit to see them)\n".utf8))
            }
            if csv {
                var out = CSVWriter(header: ["at", "actor", "action", "event_id", "user_id", "detail"])
                for e in entries { out.append([e.at, e.actor, e.action, e.eventID ?? "", e.userID ?? "", e.detail ?? ""]) }
                FileHandle.standardOutput.write(Data([0xEF, 0xBB, 0xBF] + out.bytes)) // the BOM, as over HTTP (CSVReports)
                return
            }
            if json { return try JSONOutput.print(entries) }
            for e in entries {
                print("\(e.at)  \(e.actor.padding(toLength: 10, withPad: " ", startingAt: 0))  \(e.action.padding(toLength: 12, withPad: " ", startingAt: 0))  event \(e.eventID ?? "-")  user \(e.userID ?? "-")\(e.detail.map { "  \($0)" } ?? "")")
            }
        }
    }
}
