import ArgumentParser
import Foundation
import StaffcastClient
import StaffcastCore

struct TemplateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "template",
        abstract: "Named messages of an event, sent with staffcast send --template NAME (admins and owners).",
        discussion: """
            The same announcements come every day ("Gates open", "Lunch is served"): keep
            them as templates with their type, priority and expiry, and send them by name.
            A send's own --type, --priority and --expires override the template's.

            Examples:
              staffcast template create --event $EVENT --name gates-open --priority high \\
                "Gates are open"
              staffcast template list --event $EVENT
              staffcast send --event $EVENT --template gates-open
              staffcast template delete --event $EVENT gates-open
            """,
        subcommands: [Create.self, List.self, Delete.self])

    struct Create: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Store a template; prints its name.")
        @OptionGroup var target: EventOptions
        @Option(help: ArgumentHelp("The template's name (1 to 100 bytes, no '/').", valueName: "name")) var name: String
        @OptionGroup var kind: MessageKindOptions
        @Argument(help: "The template's text.") var message: String

        func run() throws {
            try reportingFailures {
                let eventID = try target.eventID()
                do throws(StaffcastError) {
                    try MessageTemplate.validateName(name)
                    _ = try kind.request(event: eventID, text: message)
                } catch {
                    throw CommandFailure(error.message)
                }
                let t = try target.api().createTemplate(event: eventID, name: name, message: message, type: kind.type,
                                                        priority: kind.priority, expiresInMinutes: kind.expiresInMinutes)
                print(t.name)
            }
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The event's templates: name, type, priority, expiry, text.")
        @OptionGroup var listing: EventListing

        func run() throws {
            try reportingFailures {
                try listing.show("templates", fetch: { try $0.templates(event: $1) },
                                 none: "No templates for this event (staffcast template create makes one).",
                                 header: ["NAME", "TYPE", "PRIORITY", "EXPIRES", "MESSAGE"]) { t in
                    [t.name, t.messageType.rawValue, t.priority.rawValue, t.expiresInMinutes.map { "\($0) min" } ?? "-",
                     TextTable.oneLine(t.message, max: 60)]
                }
            }
        }
    }

    struct Delete: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete a template; prints its name.")
        @OptionGroup var target: EventOptions
        @Argument(help: "The template's name.") var name: String

        func run() throws {
            try reportingFailures {
                let eventID = try target.eventID()
                try target.api().deleteTemplate(event: eventID, name: name)
                print(name)
            }
        }
    }
}
