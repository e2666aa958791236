import ArgumentParser
import Foundation
import StaffcastClient

/// What a client command about one event takes: how it reaches the server (`ClientOptions`)
/// and `--event`.
struct EventOptions: ParsableArguments {
    @OptionGroup var client: ClientOptions
    @Option(help: "Event id.") var event: String

    /// `--event` as an id (a failure that says so when it is not a UUID).
    func eventID() throws -> UUID { try UUID(option: "--event", event) }

    /// The server's API, as `ClientOptions.api()`.
    func api() throws -> APIClient { try client.api() }
}
