import ArgumentParser
import Foundation
import StaffcastClient

struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show a server's health for ops; exit status 1 when it is not ready.",
        discussion: """
            Examples:
              staffcast status
              staffcast status --server http://10.0.0.5:8080 --json
            """)

    @OptionGroup var client: ClientOptions
    @Flag(help: "Print the raw JSON.") var json = false

    func run() throws {
        try reportingFailures {
            let api = try client.api(required: false)
            let ready = try api.raw("GET", "/readyz")
            let readiness = (try? JSONSerialization.jsonObject(with: ready.body)) as? [String: Any] ?? [:]
            var status: [String: Any]?
            if api.token != nil, let body = try? api.call("GET", "/v1/status") {
                status = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any]
            }
            if json {
                var out: [String: Any] = ["ready": ready.status == 200, "readiness": readiness]
                if let status { out["status"] = status }
                let data = try JSONSerialization.data(withJSONObject: out, options: [.sortedKeys, .prettyPrinted])
                print(String(decoding: data, as: UTF8.self))
            } else {
                print("server    \(api.server.absoluteString)")
                print("ready     \(ready.status == 200 ? "yes" : "NO")")
                print("database  \(readiness["database"] as? String ?? "?")")
                print("listener  \(readiness["listener"] as? String ?? "?")")
                if let status {
                    for key in ["node", "version", "uptime_seconds", "connections", "subscriptions"] {
                        print("\(key.padding(toLength: 9, withPad: " ", startingAt: 0)) \(status[key].map { "\($0)" } ?? "?")")
                    }
                }
            }
            if ready.status != 200 { throw ExitCode.failure }
        }
    }
}
