import ArgumentParser
import Foundation

/// `--event` and `--user` of `admin grant` and `admin revoke`: whose access to which event.
struct GrantTarget: ParsableArguments {
    @Option(help: "Event id.") var event: String
    @Option(help: "User id.") var user: String

    /// Both as ids (a failure naming the option that is not a UUID).
    func ids() throws -> (event: UUID, user: UUID) {
        (try UUID(option: "--event", event), try UUID(option: "--user", user))
    }
}
