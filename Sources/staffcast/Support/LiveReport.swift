import ArgumentParser
import Foundation
import StaffcastClient
import StaffcastCore

/// A report on one message that `--watch` keeps up to date (`receipts`, `answers`): fetched
/// again whenever a frame about it arrives over the event's WebSocket, and every 5 s as a
/// safety net (e.g. while reconnecting), and shown again when it changed, until it is complete
/// or Ctrl-C. Everything runs on the calling thread (the subscriber session's loop).
enum LiveReport {
    /// Shows `first` (`show(report, redraw)`); with `watch`, unless it is complete already,
    /// follows its event (`event` is asked only then) and shows each change, and ends with exit
    /// status 1 when the last report is still not complete (Ctrl-C). Throws when the connection
    /// fails for good or access to the event ends.
    static func run<Report>(_ first: Report, watch: Bool, api: APIClient, event: () throws -> UUID,
                            fetch: () -> Report?, differs: (Report, Report) -> Bool,
                            isComplete: (Report) -> Bool, concerns: (ServerFrame) -> Bool,
                            show: (Report, _ redraw: Bool) -> Void) throws {
        show(first, false)
        guard watch, !isComplete(first) else { return }
        let event = try event()
        guard let token = api.token else { throw ClientError.missingToken }
        StopFlag.shared.install()
        let session = SubscriberSession(webSocketURL: api.webSocketURL, token: token, eventID: event, cursors: nil)
        var current = first
        var changed = false
        var lastFetch = Date()
        var failure: CommandFailure?
        session.run(shouldStop: { StopFlag.shared.isSet || isComplete(current) || failure != nil }, tick: {
            guard changed || Date().timeIntervalSince(lastFetch) >= 5 else { return }
            changed = false
            lastFetch = Date()
            if let next = fetch(), differs(next, current) {
                current = next
                show(current, true)
            }
        }) { update in
            switch update {
            case .frame(let frame) where concerns(frame): changed = true
            case .subscribed: changed = true // changes made while connecting
            case .fatal(let reason, let notAllowed): failure = CommandFailure(reason, status: notAllowed ? .notAllowed : .failed)
            case .frame(.accessRevoked): failure = CommandFailure("your access to this event has ended", status: .notAllowed)
            default: break
            }
        }
        if let failure { throw failure }
        if !isComplete(current) { throw ExitCode(1) }
    }

    /// The `--json` form: the server's JSON, one object a line (a line on each change while watching).
    static func writeJSONLine(_ json: Data) {
        var line = json
        if line.last != 0x0A { line.append(0x0A) }
        FileHandle.standardOutput.write(line)
    }

    /// What a redrawn report starts with: a cleared screen on a terminal, a blank line elsewhere.
    static func redrawPrefix(redraw: Bool, screen: Bool) -> String {
        guard redraw else { return "" }
        return screen ? "\u{1B}[H\u{1B}[2J" : "\n"
    }
}
