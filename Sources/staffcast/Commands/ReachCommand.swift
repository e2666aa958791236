import ArgumentParser
import Foundation
import StaffcastClient
import StaffcastCore

struct ReachCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reach",
        abstract: "Show who a message to an event would reach live now, and who is not connected.",
        discussion: """
            For admins and owners of the event. Counts everyone with access to the event
            (the roster) and those with a live connection to it on any server; lists the
            others with when each was last connected (to within about 20 s), longest gone
            first. With zones (staffcast team create --zone), it shows how many have
            checked into each zone and how many of them are connected.

            Examples:
              staffcast reach --event $EVENT
              staffcast reach --event $EVENT --json | jq '.offline[].display_name'
            """)

    @OptionGroup var target: EventOptions
    @Flag(help: "Print the server's JSON instead.") var json = false

    func run() throws {
        try reportingFailures {
            let eventID = try target.eventID()
            let reach = try target.api().reach(event: eventID)
            if json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys]
                FileHandle.standardOutput.write(try encoder.encode(reach) + Data([0x0A]))
                return
            }
            print("\(reach.connected) of \(reach.roster) people on the event connected now (organisers included; a message counts its recipients without its sender)")
            for zone in reach.zones {
                print("  zone \(zone.name): \(zone.connected) of \(zone.members) connected")
            }
            if reach.offline.isEmpty { return }
            print("not connected:")
            let now = Date()
            for person in reach.offline {
                let seen = person.lastSeen.map { "last seen \(Self.ago($0, now: now)) (\(RFC3339.format($0)))" } ?? "never seen"
                print("  \(person.displayName)  \(seen)")
            }
        }
    }

    static func ago(_ date: Date, now: Date) -> String {
        let s = max(0, Int(now.timeIntervalSince(date)))
        if s < 60 { return "\(s) s ago" }
        if s < 3_600 { return "\(s / 60) min ago" }
        if s < 86_400 { return "\(s / 3_600) h ago" }
        return "\(s / 86_400) d ago"
    }
}
