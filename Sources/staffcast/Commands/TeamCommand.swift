import ArgumentParser
import Foundation
import StaffcastClient
import StaffcastCore
import StaffcastQR

struct TeamCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "team",
        abstract: "Teams and zones of an event: send to some people instead of everyone (admins and owners).",
        discussion: """
            A team is a named group of an event's people ("Security", "Medical") that
            organisers fill. A zone (--zone) is a post people check into themselves ("Gate
            3"): each person is in at most one zone of an event, and checking into another
            moves them. Send to them with staffcast send --team NAME (repeatable); only
            they and the event's admins and owners get the message. staffcast reach shows
            who is connected in each zone.

            Examples:
              staffcast team create --event $EVENT Security
              staffcast team create --event $EVENT --zone "Gate 3"
              staffcast team add --event $EVENT --team Security --user $USER_ID
              staffcast team list --event $EVENT
              staffcast team checkin-link --event $EVENT --team "Gate 3" --server \\
                http://10.0.0.5:8080
              staffcast send --event $EVENT --team Security --team Medical \\
                "Fight at gate 3"
            """,
        subcommands: [Create.self, List.self, Delete.self, Add.self, Remove.self, Members.self, CheckinLink.self])

    static func validName(_ name: String) throws {
        do throws(StaffcastError) {
            try Team.validateName(TeamName.normalize(name)) // the server stores it normalized
        } catch {
            throw CommandFailure(error.message)
        }
    }

    struct Create: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create a team (or with --zone a zone); prints its name.")
        @OptionGroup var target: EventOptions
        @Flag(help: "Make a zone: people check into it themselves, one zone at a time.") var zone = false
        @Argument(help: "The name (1 to 100 bytes, no '/' or ',').") var name: String

        func run() throws {
            try reportingFailures {
                let eventID = try target.eventID()
                try TeamCommand.validName(name)
                let team = try target.api().createTeam(event: eventID, name: name, kind: zone ? .zone : .team)
                print(team.name)
            }
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The event's teams and zones with their sizes.")
        @OptionGroup var listing: EventListing

        func run() throws {
            try reportingFailures {
                try listing.show("teams", fetch: { try $0.teams(event: $1) },
                                 none: "No teams or zones in this event (staffcast team create makes one).",
                                 header: ["NAME", "KIND", "MEMBERS"]) { [$0.name, $0.kind.rawValue, String($0.members)] }
            }
        }
    }

    struct Delete: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete a team or zone and its memberships; prints its name. Messages already sent keep their audience.")
        @OptionGroup var target: EventOptions
        @Argument(help: "The team's name.") var name: String

        func run() throws {
            try reportingFailures {
                try target.api().deleteTeam(event: try target.eventID(), name: name)
                print(name)
            }
        }
    }

    /// What `add` and `remove` are given: the event, the team and the person.
    struct Membership: ParsableArguments {
        @OptionGroup var target: EventOptions
        @Option(help: "The team's name.") var team: String
        @Option(help: "The user's id.") var user: String

        func change(_ call: (APIClient, UUID, String, UUID) throws -> Void) throws {
            try reportingFailures {
                try call(try target.api(), try target.eventID(), team, try UUID(option: "--user", user))
            }
        }
    }

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add a person (with access to the event) to a team; for a zone, moves them out of their other zone.")
        @OptionGroup var member: Membership

        func run() throws { try member.change { try $0.addTeamMember(event: $1, team: $2, user: $3) } }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove a person from a team or zone.")
        @OptionGroup var member: Membership

        func run() throws { try member.change { try $0.removeTeamMember(event: $1, team: $2, user: $3) } }
    }

    struct Members: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Who is in a team or zone now.")
        @OptionGroup var target: EventOptions
        @Option(help: "The team's name.") var team: String
        @Flag(help: "Print JSON instead of a table.") var json = false

        func run() throws {
            try reportingFailures {
                let members = try target.api().teamMembers(event: try target.eventID(), team: team)
                if json {
                    return try JSONOutput.print(["members": members])
                }
                print(TextTable.render(header: ["USER", "NAME"],
                                       rows: members.map { [$0.userID.uuidString.lowercased(), $0.displayName] }))
            }
        }
    }

    struct CheckinLink: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "checkin-link",
            abstract: "Print a zone's check-in link on stdout, and a QR code of it on stderr, to put up at that post.",
            discussion: """
                Staff with access to the event check in with staffcast checkin URL (or by
                opening it in the staff app). --server is the address staff reach the server
                at.
                """)
        @OptionGroup var target: EventOptions
        @Option(help: "The zone's name.") var team: String
        @Flag(help: "Draw the QR code on stderr even when it is not a terminal.") var qr = false

        func run() throws {
            try reportingFailures {
                let eventID = try target.eventID()
                // The zone must exist (and the caller see it): a link to nothing helps nobody.
                let zones = try target.api().teams(event: eventID)
                guard let zone = zones.first(where: { $0.name == team }) else {
                    throw CommandFailure("there is no zone named '\(team)' in this event (staffcast team list shows them)",
                                         status: .notAllowed)
                }
                guard zone.kind == .zone else {
                    throw CommandFailure("'\(team)' is a team, not a zone: only zones take check-ins (staffcast team create --zone)")
                }
                let url = CheckinURL.make(base: target.client.serverURL, event: eventID, zone: team)
                FileHandle.standardOutput.write(Data((url + "\n").utf8))
                if qr || isatty(STDERR_FILENO) == 1 { printError(try QRCode(url).terminalText()) }
            }
        }
    }
}

/// `staffcast checkin URL`: checks the token's user into the zone of a check-in link.
struct CheckinCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "checkin",
        abstract: "Check into a zone (your post) with its check-in link; you leave any other zone of the event.",
        discussion: """
            Example: staffcast checkin http://10.0.0.5:8080/checkin/EVENT_ID/Gate%203
            The link's server is used unless --server says otherwise.
            """)
    @OptionGroup var client: ClientOptions
    @Argument(help: "The check-in link of the zone.") var url: String

    func run() throws {
        try reportingFailures {
            guard let link = CheckinURL.parse(url) else {
                throw CommandFailure("'\(url)' is not a check-in link (it looks like http://HOST:PORT/checkin/EVENT_ID/ZONE)")
            }
            var options = client
            if options.server == nil { options.server = link.base }
            try options.api().checkIn(event: link.event, zone: link.zone)
            print("checked in at \(link.zone)")
        }
    }
}
