import ArgumentParser
import Foundation
import StaffcastClient

/// What a client command about one event takes: how it reaches the server (`ClientOptions`)
/// and the event: `--event`, else `STAFFCAST_EVENT`, else the event `staffcast join` saved
/// (so a staff member who joined can simply run `staffcast watch`).
struct EventOptions: ParsableArguments {
    @OptionGroup var client: ClientOptions
    @Option(help: "Event id (default: STAFFCAST_EVENT, else the event staffcast join saved).") var event: String?

    /// Where `staffcast join` keeps the event it joined, beside the token and the server.
    static var defaultEventFile: String {
        (ClientOptions.defaultTokenFile as NSString).deletingLastPathComponent + "/event"
    }

    /// The event as an id (a failure that says so when it is not a UUID or there is none).
    func eventID() throws -> UUID {
        if let event { return try UUID(option: "--event", event) }
        if let env = environment("STAFFCAST_EVENT") { return try UUID(option: "STAFFCAST_EVENT", env) }
        if let saved = try? String(contentsOfFile: Self.defaultEventFile, encoding: .utf8),
           let id = UUID(uuidString: saved.trimmingCharacters(in: .whitespacesAndNewlines)) {
            return id
        }
        throw CommandFailure("which event? Give --event EVENT_ID (staffcast admin event list shows ids)", status: .usage)
    }

    /// The server's API, as `ClientOptions.api()`.
    func api() throws -> APIClient { try client.api() }
}
