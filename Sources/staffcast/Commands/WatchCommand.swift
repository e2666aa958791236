import ArgumentParser
import Foundation
import StaffcastClient
import StaffcastCore

struct WatchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Watch an event's messages live (the staff terminal client).",
        discussion: """
            Reconnects by itself and catches up with what was sent meanwhile, also after a restart
            (the last seen message is remembered under ~/.local/state/staffcast).
            With --json (or when stdout is not a terminal) it prints one JSON object a line.

            Examples:
              staffcast watch --event $EVENT
              staffcast watch --event $EVENT --json | jq .message.message
            """)

    @OptionGroup var client: ClientOptions
    @Option(help: "Event id.") var event: String
    @Flag(help: "One JSON object per line instead of the screen.") var json = false

    func run() throws {
        try reportingFailures {
            guard let eventID = UUID(uuidString: event) else { throw CommandFailure("--event '\(event)' is not a UUID") }
            let api = try client.api()
            guard let token = api.token else { throw ClientError.missingToken }
            let session = SubscriberSession(webSocketURL: api.webSocketURL, token: token, eventID: eventID, cursors: CursorStore())
            try LineWatcher(session: session).run()
        }
    }
}

/// `watch --json`: one JSON object per line on stdout (messages, notifications, reads),
/// connection changes on stderr.
struct LineWatcher {
    let session: SubscriberSession

    func run() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        var fatal: String?
        session.run(shouldStop: { fatal != nil || StopFlag.shared.isSet }, tick: {}) { update in
            switch update {
            case .connecting(let attempt) where attempt > 1:
                printError("staffcast: reconnecting (attempt \(attempt))")
            case .connecting:
                break
            case .connected(let user):
                printError("staffcast: connected as \(user.displayName)")
            case .subscribed(_, let history, _):
                for m in history { emit(.message(m), encoder) }
            case .message(let m):
                emit(.message(m), encoder)
            case .frame(let frame):
                switch frame {
                case .notification, .accessRevoked, .read, .notificationRead, .error: emit(frame, encoder)
                default: break
                }
                if case .accessRevoked = frame { fatal = "your access to this event has ended" }
            case .disconnected(let reason, let retryIn):
                printError("staffcast: disconnected (\(reason)); retrying in \(Int(retryIn.rounded())) s")
            case .fatal(let reason):
                fatal = reason
            }
        }
        if let fatal { throw CommandFailure(fatal) }
    }

    private func emit(_ frame: ServerFrame, _ encoder: JSONEncoder) {
        if let data = try? encoder.encode(frame) {
            FileHandle.standardOutput.write(data + Data([0x0A]))
        }
    }
}

/// Set by SIGINT/SIGTERM so a client loop can end cleanly and restore the terminal.
final class StopFlag: @unchecked Sendable {
    static let shared = StopFlag()
    private let lock = NSLock()
    private var set = false
    var isSet: Bool { lock.lock(); defer { lock.unlock() }; return set }
    func raise() { lock.lock(); set = true; lock.unlock() }

    /// Routes SIGINT and SIGTERM to `raise`.
    func install() {
        for sig in [SIGINT, SIGTERM] {
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            source.setEventHandler { StopFlag.shared.raise() }
            source.resume()
            sources.append(source)
        }
    }
    private var sources: [DispatchSourceSignal] = []
}
