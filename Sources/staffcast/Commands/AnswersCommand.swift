import ArgumentParser
import Foundation
import StaffcastClient
import StaffcastCore

struct AnswersCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "answers",
        abstract: "Show a poll's answers: counts, who answered what, and who has not answered.",
        discussion: """
            For admins and owners of the message's event. "Not answered" is everyone the
            poll was for (its audience, but the sender) who has not answered.

            With --watch it stays open and redraws as answers come in (live `poll_tally`
            frames over the WebSocket) until everyone has answered or Ctrl-C; the exit
            status is 0 when everyone has answered. --json prints the server's JSON; --csv
            the answers as a spreadsheet (RFC 4180, with the people who have not answered
            last, their option empty).

            Examples:
              ID=$(staffcast send --event $EVENT --poll safe --priority urgent \\
                "Are you safe?")
              staffcast answers $ID --watch
              staffcast answers $ID --csv > answers.csv
            """)

    @OptionGroup var client: ClientOptions
    @Argument(help: "The message id of the poll (printed by staffcast send).") var messageID: String
    @Flag(help: "Keep it open, redrawn as staff answer, until everyone has answered or Ctrl-C.") var watch = false
    @Flag(help: "Print the server's JSON instead.") var json = false
    @Flag(help: "Print the answers as CSV instead.") var csv = false

    func run() throws {
        try reportingFailures {
            let id = try UUID(messageID: messageID)
            guard !(json && csv) else { throw CommandFailure("give --json or --csv, not both") }
            let api = try client.api()
            if csv {
                guard !watch else { throw CommandFailure("--csv prints one report; leave out --watch") }
                FileHandle.standardOutput.write(try api.csv("/v1/messages/\(id.uuidString.lowercased())/answers"))
                return
            }
            let first = try api.answers(message: id)
            let screen = !json && isatty(STDOUT_FILENO) == 1
            try LiveReport.run(
                first, watch: watch, api: api,
                event: { try api.receipts(message: id).list.eventID }, // the poll's event: from its receipts
                fetch: { try? api.answers(message: id) },
                differs: { $0.report != $1.report }, isComplete: { $0.report.unanswered.isEmpty },
                concerns: { if case .pollTally(let t) = $0 { return t.messageID == id } else { return false } },
                show: { show($0, redraw: $1, screen: screen) })
        }
    }

    private func show(_ r: (report: PollAnswers, json: Data), redraw: Bool, screen: Bool) {
        if json { return LiveReport.writeJSONLine(r.json) }
        var out = LiveReport.redrawPrefix(redraw: redraw, screen: screen)
        let total = r.report.answers.count + r.report.unanswered.count
        out += "answered by \(r.report.answers.count) of \(total)\n"
        for (i, option) in r.report.options.enumerated() {
            out += "  \(i + 1). \(option): \(r.report.counts[i])\n"
        }
        for a in r.report.answers {
            let option = r.report.options.indices.contains(a.option) ? r.report.options[a.option] : "\(a.option)"
            out += "  ✓ \(a.displayName): \(option)  \(RFC3339.format(a.answeredAt))\n"
        }
        if !r.report.unanswered.isEmpty {
            out += "not answered by \(r.report.unanswered.count):\n"
            for p in r.report.unanswered { out += "  · \(p.displayName)\n" }
        } else {
            out += "everyone has answered\n"
        }
        FileHandle.standardOutput.write(Data(out.utf8))
    }
}
