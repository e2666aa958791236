import ArgumentParser
import Foundation
import StaffcastCore

/// `--type`, `--priority` and `--expires` of whatever makes a message (`send`, `remind`,
/// `template create`): spelled, parsed and explained once for all of them.
struct MessageKindOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("broadcast (default), alert or emergency.", valueName: "type")) var type: String?
    @Option(help: ArgumentHelp("low, normal (default), high or urgent.", valueName: "priority")) var priority: String?
    @Option(name: .customLong("expires"), help: ArgumentHelp(
        "How long each message lasts once sent: 30m, 2h, 3d or a number of minutes (up to 30d).", valueName: "duration"))
    var expiresIn: MinutesArgument?

    /// --expires in minutes; nil when not given.
    var expiresInMinutes: Int? { expiresIn?.minutes }

    /// `text` as a message of this kind to `event`, checked by the protocol's own rules, so
    /// that a mistake is explained before any round trip.
    func request(event: UUID, text: String, escalateAfterMinutes: Int? = nil) throws(StaffcastError) -> SendRequest {
        try SendRequest(eventID: event, message: text, messageType: type, priority: priority, expiresInMinutes: expiresInMinutes,
                        escalateAfterMinutes: escalateAfterMinutes)
    }
}
