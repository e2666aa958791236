import ArgumentParser
import Foundation
import StaffcastClient

/// What a client command about one event takes: how it reaches the server (`ClientOptions`)
/// and the event: `--event`, else `STAFFCAST_EVENT`, else the event `staffcast join` saved —
/// the last only with the token join saved too (no --token, --token-file or STAFFCAST_TOKEN),
/// so a staff member who joined can simply run `staffcast watch`, while an organiser using
/// their own token never sends to an event some earlier join left behind.
struct EventOptions: ParsableArguments {
    @OptionGroup var client: ClientOptions
    @Option(help: "Event id (default: STAFFCAST_EVENT, else the event staffcast join saved, with its token).")
    var event: String?

    /// Where `staffcast join` keeps the event it joined, beside the token and the server.
    static var defaultEventFile: String {
        (ClientOptions.defaultTokenFile as NSString).deletingLastPathComponent + "/event"
    }

    /// The event as an id (a failure that says so when it is not a UUID or there is none).
    func eventID() throws -> UUID {
        if let event { return try UUID(option: "--event", event) }
        if let env = environment("STAFFCAST_EVENT") { return try UUID(option: "STAFFCAST_EVENT", env) }
        let joinedIdentity = client.token == nil && client.tokenFile == nil && environment("STAFFCAST_TOKEN") == nil
        if joinedIdentity, let saved = try? String(contentsOfFile: Self.defaultEventFile, encoding: .utf8),
           let id = UUID(uuidString: saved.trimmingCharacters(in: .whitespacesAndNewlines)) {
            return id
        }
        throw CommandFailure("which event? Give --event EVENT_ID (staffcast admin event list shows ids)", status: .usage)
    }

    /// The server's API, as `ClientOptions.api()`.
    func api() throws -> APIClient { try client.api() }
}
