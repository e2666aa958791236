import ArgumentParser
import StaffcastServer

@main
struct Staffcast: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "staffcast",
        abstract: "Realtime staff broadcasts for events: send alerts, watch them, know who read them.",
        discussion: """
            Examples, from nothing to a first alert:

            Start a server on this machine (its own PostgreSQL cluster under ./.staffcast):
              staffcast serve

            Set up an event, an organiser and a staff member:
              EVENT=$(staffcast admin event create --name "Summer Festival")
              ORG=$(staffcast admin user create --name "Olivia Organiser")
              staffcast admin grant --event $EVENT --user $ORG --level owner
              staffcast admin token issue --user $ORG

            Or let staff join themselves with an invite link (a QR code on the terminal):
              staffcast admin invite create --event $EVENT --uses 300 --server \\
                http://THIS-HOST:8080
              # on the staff's machine
              staffcast join http://THIS-HOST:8080/join/CODE --name "Sam (gate 3)"
            The organiser's web console is at http://THIS-HOST:8080/console.

            Send and watch:
              staffcast send --token TOKEN --event $EVENT --priority urgent \\
                "Evacuate hall B"
              staffcast watch --token STAFF_TOKEN --event $EVENT

            Emergencies: who is connected, who has read it:
              staffcast reach --event $EVENT
              ID=$(staffcast send --event $EVENT --type emergency "Evacuate hall B")
              staffcast receipts $ID --watch

            Durations are written 30m, 2h or 3d everywhere (a plain number is minutes).
            \(ExitStatus.helpText)
            """,
        version: StaffcastVersion.current,
        subcommands: [ServeCommand.self, ConfigCommand.self, MigrateCommand.self, AdminCommand.self, SendCommand.self,
                      WatchCommand.self, JoinCommand.self, StatusCommand.self, ClusterCommand.self,
                      HistoryCommand.self, RemindCommand.self, ScheduledCommand.self, EditCommand.self, RetractCommand.self,
                      RepliesCommand.self, ReachCommand.self, ReceiptsCommand.self, TemplateCommand.self,
                      TeamCommand.self, CheckinCommand.self, AnswersCommand.self])
}
