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

            Send and watch:
              staffcast send --token TOKEN --event $EVENT --priority urgent "Evacuate hall B"
              staffcast watch --token STAFF_TOKEN --event $EVENT

            Emergencies: who is connected, who has read it:
              staffcast reach --event $EVENT
              ID=$(staffcast send --event $EVENT --type emergency "Evacuate hall B")
              staffcast receipts $ID --watch
            """,
        version: StaffcastVersion.current,
        subcommands: [ServeCommand.self, MigrateCommand.self, AdminCommand.self, SendCommand.self,
                      WatchCommand.self, StatusCommand.self, ClusterCommand.self,
                      ReachCommand.self, ReceiptsCommand.self])
}
