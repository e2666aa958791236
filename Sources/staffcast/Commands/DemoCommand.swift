import ArgumentParser
import Foundation
import StaffcastPostgres

struct DemoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Create a demo event with an organiser (owner) and a staff member, and their tokens.",
        discussion: """
            Writes shell variables (EVENT, ORGANISER, STAFF, token file paths) to --output
            and the two tokens to files beside it, mode 0600. `make run` calls it on first
            run.
            Example:
              staffcast admin demo --output .staffcast/demo.env && source \\
                .staffcast/demo.env
            """)

    @Option(help: ArgumentHelp("Where to write the shell variables.", valueName: "file")) var output: String
    @OptionGroup var database: DatabaseOptions

    func run() throws {
        try reportingFailures {
            let out = URL(fileURLWithPath: output).standardizedFileURL
            let dir = out.deletingLastPathComponent()
            let values = try AdminCommand.withStore(database) { store -> [String: String] in
                let event = try store.createEvent(name: "Demo Festival", startsAt: Date())
                let organiser = try store.createUser(name: "Olivia Organiser")
                let staff = try store.createUser(name: "Sam Scanner")
                try store.grant(event: event, user: organiser, level: .owner)
                try store.grant(event: event, user: staff, level: .staff)
                return ["EVENT": event.uuidString.lowercased(), "ORGANISER": organiser.uuidString.lowercased(),
                        "STAFF": staff.uuidString.lowercased(),
                        "ORGANISER_TOKEN": try store.issueToken(user: organiser, label: "demo organiser"),
                        "STAFF_TOKEN": try store.issueToken(user: staff, label: "demo staff")]
            }
            let organiserFile = dir.appendingPathComponent("organiser.token").path
            let staffFile = dir.appendingPathComponent("staff.token").path
            try writePrivate(organiserFile, values["ORGANISER_TOKEN"]! + "\n")
            try writePrivate(staffFile, values["STAFF_TOKEN"]! + "\n")
            let env = """
                DEMO_EVENT_NAME='Demo Festival'
                EVENT=\(values["EVENT"]!)
                ORGANISER=\(values["ORGANISER"]!)
                STAFF=\(values["STAFF"]!)
                ORGANISER_TOKEN_FILE=\(organiserFile)
                STAFF_TOKEN_FILE=\(staffFile)

                """
            try writePrivate(out.path, env)
            printError("demo created: event \(values["EVENT"]!), tokens in \(organiserFile) and \(staffFile)")
        }
    }

    private func writePrivate(_ path: String, _ text: String) throws {
        guard FileManager.default.createFile(atPath: path, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600]) else {
            throw CommandFailure("cannot write \(path)")
        }
        chmod(path, 0o600)
    }
}
