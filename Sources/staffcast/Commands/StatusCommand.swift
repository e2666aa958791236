import ArgumentParser
import Foundation
import StaffcastClient
import StaffcastCore

struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show a server's health, or who of an event's staff is connected; exit 3 when not ready.",
        discussion: """
            Without a token (or the ops token) it shows readiness; with an owner's token or
            the ops token it adds uptime, connections and subscribers per event. With
            --event it lists each staff member: connected or not, since when, heartbeat
            round trip, reconnects in the last hour, unread count and last read message —
            so an organiser can see who would not get an alert before sending it. Each
            server answers for the clients connected to it.

            Examples:
              staffcast status
              staffcast status --server http://10.0.0.5:8080 --token-file ops.token --json
              staffcast status --event $EVENT --watch

            \(ExitStatus.helpText)
            """)

    @OptionGroup var client: ClientOptions
    @Option(help: "List this event's staff and whether each is connected.") var event: String?
    @Flag(help: "Print JSON.") var json = false
    @Flag(help: "Refresh every 2 seconds in place (Ctrl-C stops).") var watch = false

    func run() throws {
        try reportingFailures {
            let api = try client.api(required: event != nil)
            var eventID: UUID?
            if let event {
                let e = try UUID(option: "--event", event)
                eventID = e
            }
            if watch { StopFlag.shared.install() }
            var ready = false
            var shown = false
            let screen = isatty(STDOUT_FILENO) != 0
            repeat {
                let (text, isReady) = try report(api, eventID: eventID)
                ready = isReady
                // A terminal is cleared before each report; a pipe or file gets them one after
                // another with a blank line between, and no escape codes.
                if watch { print(LiveReport.redrawPrefix(redraw: shown || screen, screen: screen), terminator: "") }
                shown = true
                print(text)
                if watch { fflushStdout() }
                if watch {
                    for _ in 0..<20 where !StopFlag.shared.isSet { usleep(100_000) }
                }
            } while watch && !StopFlag.shared.isSet
            if !ready { throw ExitStatus.unavailable.exitCode }
        }
    }

    private func fflushStdout() { FileHandle.standardOutput.synchronizeFile() }

    private func object(_ data: Data) -> [String: Any] {
        ((try? JSONSerialization.jsonObject(with: data)) as? [String: Any]) ?? [:]
    }

    /// The text to print and whether the server is ready.
    func report(_ api: APIClient, eventID: UUID?) throws -> (String, Bool) {
        let readyResponse = try api.raw("GET", "/readyz")
        let readiness = object(readyResponse.body)
        let ready = readyResponse.status == 200
        var status: [String: Any]?
        if api.token != nil, let body = try? api.call("GET", "/v1/status") { status = object(body) }
        var roster: [String: Any]?
        if let eventID { roster = object(try api.call("GET", "/v1/events/\(eventID.uuidString.lowercased())/status")) }

        if json {
            var out: [String: Any] = ["ready": ready, "readiness": readiness]
            if let status { out["status"] = status }
            if let roster { out["event"] = roster }
            let data = try JSONSerialization.data(withJSONObject: out, options: [.sortedKeys])
            return (String(decoding: data, as: UTF8.self), ready)
        }
        var lines = [
            "server     \(api.server.absoluteString)\(status.flatMap { $0["node"] as? String }.map { "  (node \($0))" } ?? "")",
            "ready      \(ready ? "yes" : "NO")",
            "database   \(readiness["database"] as? String ?? "?")\(status.flatMap { $0["database_latency_ms"] as? Double }.map { "  (\($0) ms)" } ?? "")",
            "listener   \(readiness["listener"] as? String ?? "?")",
        ]
        if let status {
            let uptime = status["uptime_seconds"] as? Int ?? 0
            lines.append("uptime     \(WatchRenderer.duration(TimeInterval(uptime)))   version \(status["version"] as? String ?? "?")")
            lines.append("clients    \(status["connections"] as? Int ?? 0) connected, \(status["subscriptions"] as? Int ?? 0) subscriptions")
            for e in status["events"] as? [[String: Any]] ?? [] {
                let name = e["name"] as? String ?? (e["event_id"] as? String ?? "?")
                let roster = (e["roster"] as? Int).map { " of \($0) with access" } ?? ""
                let last = (e["last_message_at"] as? String).map { "  last message \($0)" } ?? ""
                lines.append("  \(name): \(e["subscribers"] as? Int ?? 0) subscribed\(roster)\(last)")
            }
        }
        if let roster {
            let staff = roster["staff"] as? [[String: Any]] ?? []
            lines.append("")
            lines.append("event \(roster["event_id"] as? String ?? "?"): \(roster["subscribers"] as? Int ?? 0) of \(roster["roster"] as? Int ?? 0) connected to this server")
            lines.append("  " + ["NAME".padding(toLength: 24, withPad: " ", startingAt: 0), "LEVEL ", "CONNECTED", "SINCE   ",
                                 "RTT    ", "RECONN/H", "UNREAD", "LAST READ"].joined(separator: " "))
            for m in staff {
                let connected = m["connected"] as? Bool ?? false
                let since = (m["connected_since"] as? String).flatMap(RFC3339.parse).map { WatchRenderer.timeAgo(Date().timeIntervalSince($0)) } ?? "-"
                let rtt = (m["rtt_ms"] as? Double).map { String(format: "%.1fms", $0) } ?? "-"
                let lastRead = (m["last_read_seq"] as? Int).map { "#\($0)" } ?? "never"
                lines.append("  " + [TextWidth.pad(m["display_name"] as? String ?? "?", 24),
                                     (m["access_level"] as? String ?? "").padding(toLength: 6, withPad: " ", startingAt: 0),
                                     (connected ? "yes" : "NO").padding(toLength: 9, withPad: " ", startingAt: 0),
                                     since.padding(toLength: 8, withPad: " ", startingAt: 0),
                                     rtt.padding(toLength: 7, withPad: " ", startingAt: 0),
                                     String(m["reconnects_last_hour"] as? Int ?? 0).padding(toLength: 8, withPad: " ", startingAt: 0),
                                     String(m["unread_count"] as? Int ?? 0).padding(toLength: 6, withPad: " ", startingAt: 0),
                                     lastRead].joined(separator: " "))
            }
        }
        return (lines.joined(separator: "\n"), ready)
    }
}
