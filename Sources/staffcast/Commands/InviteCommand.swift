import ArgumentParser
import Foundation
import StaffcastCore
import StaffcastPostgres
import StaffcastQR

/// `staffcast admin invite create|revoke`: invite links for an event, made on the database
/// directly like the other admin commands.
struct InviteCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "invite", abstract: "Create and revoke invite links (with a QR code) for staff to join an event.",
        discussion: """
            Staff open the link on a phone (or run `staffcast join URL --name NAME`) and
            are in: their profile is created, the level granted and a token issued. Only a
            hash of the code is stored.
            Examples:
              staffcast admin invite create --event $EVENT --uses 300 --expires 2h \\
                --server http://10.0.0.5:8080
              staffcast admin invite revoke https://staff.example.org/join/CODE
            """,
        subcommands: [InviteCreateCommand.self, InviteRevokeCommand.self])
}

struct InviteCreateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "create", abstract: "Create an invite; prints its join URL on stdout and a QR code of it on stderr.",
        discussion: """
            The QR code is drawn when stderr is a terminal (or with --qr), so that staff
            scan it at the briefing; stdout gets the URL alone, for scripts. --server is
            the address staff reach the server at (their phones too: not 127.0.0.1 unless
            they are on this machine).

            Examples:
              staffcast admin invite create --event $EVENT
              staffcast admin invite create --event $EVENT --level staff --expires 30m \\
                --uses 50
              URL=$(staffcast admin invite create --event $EVENT --uses 300 --server \\
                https://staff.example.org)
            """)

    @Option(help: "Event id.") var event: String
    @Option(help: "The level it grants: staff (default), admin or owner.") var level: AccessLevel = .staff
    @Option(help: ArgumentHelp("How long it works: 30m, 2h, 1d (default 60m, at most 7d).", valueName: "duration"))
    var expires: String = "60m"
    @Option(help: "How many people may use it (default 1, at most 10000).") var uses: Int = 1
    @Option(help: ArgumentHelp("The server's address as staff reach it (env STAFFCAST_SERVER; default: this host's name and the configured listen port, said to be a guess).",
                               valueName: "url"))
    var server: String?
    @Flag(help: "Draw the QR code on stderr even when it is not a terminal.") var qr = false
    @OptionGroup var database: DatabaseOptions

    func run() throws {
        try reportingFailures {
            let e = try UUID(option: "--event", event)
            guard let seconds = TokenLifetime.parse(expires), seconds.truncatingRemainder(dividingBy: 60) == 0 else {
                throw CommandFailure("--expires '\(expires)' is not a duration such as 30m, 2h or 1d")
            }
            let request = try InviteRequest(eventID: e, accessLevel: level, expiresInMinutes: Int(seconds / 60), maxUses: uses)
            let given = server ?? environment("STAFFCAST_SERVER")
            let base = try given ?? guessedServer()
            guard base.hasPrefix("http://") || base.hasPrefix("https://") else {
                throw CommandFailure("--server '\(base)' must start with http:// or https://")
            }
            let invite = try AdminCommand.withStore(database) { try $0.createInvite(request, base: base) }
            FileHandle.standardOutput.write(Data((invite.url + "\n").utf8)) // unbuffered: before the QR code
            if qr || isatty(STDERR_FILENO) == 1 {
                let code = try QRCode(invite.url)
                printError(code.terminalText())
            }
            printError("invite for \(invite.accessLevel.rawValue), \(invite.maxUses) use\(invite.maxUses == 1 ? "" : "s"), until \(RFC3339.format(invite.expiresAt)); staff join with: staffcast join \(invite.url) --name \"Their Name\"")
            if given == nil {
                printError("staffcast: note: \(base) is a guess (this machine's name and the configured listen port); if phones reach the server another way, create the invite with --server URL")
            }
        }
    }

    /// This machine's name with the port (and http or https) the configuration gives `serve`:
    /// a server configured on another port than 8080 got links to 8080.
    private func guessedServer() throws -> String {
        let settings = try database.settings(try database.loadConfigFile())
        let listen = settings.text(.listen) ?? "0.0.0.0:8080"
        let port = listen.split(separator: ":").last.map(String.init) ?? "8080"
        let scheme = settings.text(.tlsCert) == nil ? "http" : "https"
        return "\(scheme)://\(ProcessInfo.processInfo.hostName):\(port)"
    }
}

struct InviteRevokeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "revoke", abstract: "Revoke an invite (its join URL or code); nobody can join with it any more.",
        discussion: "Example: staffcast admin invite revoke http://10.0.0.5:8080/join/CODE")

    @Argument(help: "The join URL or its code.") var invite: String
    @OptionGroup var database: DatabaseOptions

    func run() throws {
        try reportingFailures {
            let code = InviteURL.parse(invite)?.code ?? invite
            guard InviteURL.looksLikeCode(code) else { throw CommandFailure("'\(invite)' is not a join URL or an invite code") }
            let event = try AdminCommand.withStore(database) { try $0.revokeInvite(code: code) }
            guard let event else { throw CommandFailure("there is no such invite") }
            printError("revoked the invite to event \(event.uuidString.lowercased())")
        }
    }
}
