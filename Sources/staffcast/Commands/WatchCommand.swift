import ArgumentParser
import Foundation
import StaffcastClient
import StaffcastCore

struct WatchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Watch an event's messages live (the staff terminal client).",
        discussion: """
            Reconnects by itself and catches up with what was sent meanwhile, also after a
            restart (the last seen message is remembered under ~/.local/state/staffcast).
            With --json (or when stdout is not a terminal) it prints one JSON object a
            line.

            The screen speaks English or Turkish: --lang en|tr, else LC_ALL, LC_MESSAGES or
            LANG (tr_TR.UTF-8 gives Turkish).

            Keys: ↑/↓ or j/k move (PgUp/PgDn by ten; going down past the oldest message
            loads older ones, back to the event's first), Enter shows the selected message
            in full (sender, time, read count, the whole text; ↑/↓ scroll, Esc goes back)
            and marks it read, 1-4 answer the message on screen, a marks all read (one
            request; emergency and urgent messages wait for Shift+A), d dismisses a banner,
            n shows notifications, e switches event, ? shows help, q or Ctrl-C quits. An
            event id that does not exist or that you cannot see ends watch at once with the
            reason and exit status 2 (also with --json, after printing the error object).
            Urgent banners stay until dismissed; urgent and emergency messages ring the
            bell. Emergency and urgent messages take the whole screen and ring every few
            seconds until acknowledged with Shift+A (a deliberate key; acknowledging marks
            the message read and selects it in the list, so 1-4 answer it). Unacknowledged
            ones are brought back when watch starts again, however old. A reminder (the
            organiser's escalation: you have not read it yet) brings a message back the
            same way. The top bar counts the messages still to acknowledge ("! 2 to
            acknowledge") and the list marks them with "!". In --json mode reminders are
            printed as {"op":"reminder",...} lines. Honours NO_COLOR.

            Examples:
              staffcast watch --event $EVENT
              staffcast watch --event $EVENT --lang tr
              staffcast watch --event $EVENT --json | jq .message.message
              staffcast watch --event $EVENT --json --on-message \\
                'notify-send "$STAFFCAST_PRIORITY" "$STAFFCAST_MESSAGE"'
            """)

    @OptionGroup var target: EventOptions
    @Flag(help: "One JSON object per line instead of the screen (automatic when stdout is not a terminal).") var json = false
    @Option(name: .customLong("on-message"), help: ArgumentHelp(
        "Run this shell command for each new message, with STAFFCAST_MESSAGE, STAFFCAST_PRIORITY, STAFFCAST_TYPE, STAFFCAST_SENDER, STAFFCAST_MESSAGE_ID, STAFFCAST_EVENT_ID, STAFFCAST_SEQ in its environment (line mode).",
        valueName: "command"))
    var onMessage: String?
    @OptionGroup var language: LanguageOption

    func run() throws {
        try reportingFailures {
            let strings = try language.strings()
            let eventID = try target.eventID()
            let api = try target.api()
            guard let token = api.token else { throw ClientError.missingToken }
            let session = SubscriberSession(webSocketURL: api.webSocketURL, token: token, eventID: eventID, cursors: CursorStore(),
                                            trust: api.trust)
            StopFlag.shared.install()
            var lines = json || isatty(STDOUT_FILENO) == 0
            if !lines, !CursesScreen.terminalKnown {
                let term = ProcessInfo.processInfo.environment["TERM"] ?? ""
                printError(strings.text(.lineUnknownTerminal, ["term": term]))
                lines = true
            }
            if lines {
                try LineWatcher(session: session, onMessage: onMessage, strings: strings).run()
            } else {
                let noColor = !(ProcessInfo.processInfo.environment["NO_COLOR"] ?? "").isEmpty
                try ScreenWatcher(session: session, api: api, color: !noColor, strings: strings).run()
            }
        }
    }
}

/// `watch --json`: one JSON object per line on stdout (messages, notifications, reads),
/// connection changes on stderr.
struct LineWatcher {
    let session: SubscriberSession
    var onMessage: String?
    var strings = Strings.english

    func run() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        var fatal: CommandFailure?
        session.run(shouldStop: { fatal != nil || StopFlag.shared.isSet }, tick: {}) { update in
            switch update {
            case .connecting(let attempt) where attempt > 1:
                printError(strings.text(.lineReconnecting, attempt))
            case .connecting:
                break
            case .connected(let user):
                printError(strings.text(.lineConnected, ["name": user.displayName]))
            case .subscribed(_, _, let fresh, _):
                for m in fresh { deliver(m, encoder) }
            case .message(let m):
                deliver(m, encoder)
            case .frame(let frame):
                switch frame {
                case .notification, .accessRevoked, .read, .readAll, .notificationRead, .error, .messageUpdated, .messageRetracted, .reply, .replied,
                     .reminder, .receipt:
                    emit(frame, encoder)
                default: break
                }
                if case .accessRevoked = frame { fatal = CommandFailure(strings[.accessEnded], status: .notAllowed) }
            case .disconnected(let reason, let retryIn):
                printError(strings.text(.lineDisconnected, ["reason": reason, "n": String(Int(retryIn.rounded()))]))
            case .fatal(let reason, let notAllowed):
                fatal = CommandFailure(reason, status: notAllowed ? .notAllowed : .failed)
            }
        }
        if let fatal { throw fatal }
    }

    private func deliver(_ m: StaffMessage, _ encoder: JSONEncoder) {
        emit(.message(m), encoder)
        guard let onMessage else { return }
        // Like ntfy's subscriber: the command sees the message in its environment, never in argv.
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/sh")
        p.arguments = ["-c", onMessage]
        var env = ProcessInfo.processInfo.environment
        env["STAFFCAST_TOKEN"] = nil
        env["STAFFCAST_MESSAGE"] = m.message
        env["STAFFCAST_PRIORITY"] = m.priority.rawValue
        env["STAFFCAST_TYPE"] = m.messageType.rawValue
        env["STAFFCAST_SENDER"] = m.senderName
        env["STAFFCAST_MESSAGE_ID"] = m.id.uuidString.lowercased()
        env["STAFFCAST_EVENT_ID"] = m.eventID.uuidString.lowercased()
        env["STAFFCAST_SEQ"] = String(m.seq)
        p.environment = env
        p.standardOutput = FileHandle.standardError
        do {
            try p.run()
            p.waitUntilExit()
        } catch {
            printError("staffcast: --on-message could not run: \(error.localizedDescription)")
        }
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
