import ArgumentParser
import Foundation
import StaffcastClient

/// What a command that lists one kind of thing of an event takes (`--event`, `--json`), and
/// how it prints the list: with --json the document `{"<key>": [...]}` (`JSONOutput`), else a
/// sentence when there is nothing, else a table.
struct EventListing: ParsableArguments {
    @OptionGroup var target: EventOptions
    @Flag(help: "Print the JSON list instead of a table.") var json = false

    func show<Item: Encodable>(_ key: String, fetch: (APIClient, UUID) throws -> [Item], none: String,
                               header: [String], row: (Item) -> [String]) throws {
        let list = try fetch(try target.api(), try target.eventID())
        if json { return try JSONOutput.print([key: list]) }
        if list.isEmpty { return print(none) }
        print(TextTable.render(header: header, rows: list.map(row)))
    }
}
