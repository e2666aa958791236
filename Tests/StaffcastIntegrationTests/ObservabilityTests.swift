import Foundation
import StaffcastClient
import StaffcastCore
import XCTest

/// Logs and metrics as ops read them (issue 20): ids in the log as the API writes them, typed
/// JSON fields, the promised lines at info; Prometheus text with HELP and TYPE for every
/// metric, the delivery histogram observed, separate method and route labels, process and
/// build metrics, and every metric of docs/operations.md present.
final class ObservabilityTests: IntegrationTestCase {
    func testASendIsLoggedWithTheLowerCaseIdAndTypedJSONFields() throws {
        let serve = try StaffcastProcess(["serve", "--listen", "127.0.0.1:0", "--database-url", TestDatabase.serverLogin(fixture.conninfo),
                                          "--log-json", "--log-level", "info"])
        defer { serve.stop() }
        let http = "http://127.0.0.1:\(serve.port)"
        let staff = TestSocket(try WebSocketClient(url: "ws://127.0.0.1:\(serve.port)/v1/ws",
                                                   headers: ["Authorization": "Bearer \(fixture.staffToken)"]))
        _ = try staff.expect("hello")
        _ = try staff.subscribe(fixture.event)
        let sent = try APIClient(server: http, token: fixture.ownerToken)
            .sendMessage(event: fixture.event, message: "Gates open", type: nil, priority: nil, expiresInMinutes: nil)
        _ = try staff.expect("message")
        let id = sent.id.uuidString.lowercased()
        XCTAssertTrue(serve.waitForStderr(id), "grep for the id as the API wrote it finds the log line:\n\(serve.stderr)")
        // Every loop logs its own "message fanned out"; the one with the subscriber may come
        // after one with no recipients, so wait for that one.
        func logLines() -> [[String: Any]] {
            serve.stderr.split(separator: "\n").compactMap {
                try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            }
        }
        XCTAssertTrue(waitUntil(10) {
            logLines().contains { $0["msg"] as? String == "message fanned out" && ($0["recipients"] as? Int ?? 0) > 0 }
        }, serve.stderr)
        let lines = logLines()
        let sentLine = try XCTUnwrap(lines.first { $0["msg"] as? String == "message sent" }, serve.stderr)
        XCTAssertEqual(sentLine["message_id"] as? String, id)
        XCTAssertEqual(sentLine["event_id"] as? String, fixture.event.uuidString.lowercased())
        XCTAssertTrue(sentLine["seq"] is NSNumber, "numbers are numbers: \(sentLine)")
        XCTAssertEqual((sentLine["seq"] as? NSNumber)?.int64Value, sent.seq)
        let opened = try XCTUnwrap(lines.first { $0["msg"] as? String == "connection opened" }, "connection lines at info")
        XCTAssertEqual(opened["user_id"] as? String, fixture.staff.uuidString.lowercased())
        let fanned = try XCTUnwrap(lines.first { $0["msg"] as? String == "message fanned out" && ($0["recipients"] as? Int ?? 0) > 0 })
        XCTAssertEqual(fanned["recipients"] as? Int, 1)
        XCTAssertFalse(serve.stderr.contains(sent.id.uuidString), "no upper-case ids")
        staff.close()
        XCTAssertTrue(serve.waitForStderr("connection closed"), serve.stderr)
    }

    func testMetricsHaveHelpAndTypeAndTheDeliveryHistogramMoves() throws {
        let server = try startServer()
        let staff = try server.subscriber(fixture.staffToken, fixture.event)
        _ = try server.api(fixture.ownerToken).sendMessage(event: fixture.event, message: "Gates open", type: nil, priority: nil,
                                                           expiresInMinutes: nil)
        _ = try staff.expect("message")
        _ = try server.api(fixture.staffToken).raw("GET", "/v1/events/\(UUID().uuidString.lowercased())/messages") // an error
        _ = try server.api("sc_" + String(repeating: "B", count: 43)).raw("GET", "/v1/me/events") // a token looked up
        func sample(_ text: String, _ name: String) -> Double? {
            text.split(separator: "\n").first { $0.hasPrefix(name + " ") }.flatMap { Double($0.split(separator: " ").last ?? "") }
        }
        // The histogram is observed once the last loop has queued the message: wait for it.
        var text = ""
        let deadline = Date().addingTimeInterval(10)
        repeat {
            text = String(decoding: try server.api(nil).call("GET", "/metrics"), as: UTF8.self)
        } while (sample(text, "staffcast_delivery_latency_seconds_count") ?? 0) == 0 && Date() < deadline
        XCTAssertEqual(sample(text, "staffcast_delivery_latency_seconds_count"), 1, text)

        // Every metric has HELP and TYPE.
        let names = Set(text.split(separator: "\n").filter { !$0.hasPrefix("#") }.map { line -> String in
            let name = String(line.prefix { $0 != "{" && $0 != " " })
            for suffix in ["_bucket", "_count", "_sum"] where name.hasSuffix(suffix) { return String(name.dropLast(suffix.count)) }
            return name
        })
        for name in names {
            XCTAssertTrue(text.contains("# HELP \(name) "), "no HELP for \(name)")
            XCTAssertTrue(text.contains("# TYPE \(name) "), "no TYPE for \(name)")
        }
        // Method and route apart; process and build metrics.
        XCTAssertTrue(text.contains(#"method="POST""#) && text.contains(#"route="/v1/events/{id}/messages""#), text)
        XCTAssertFalse(text.contains(#"route="POST "#), text)
        for name in ["process_resident_memory_bytes", "process_cpu_seconds_total", "process_open_fds", "process_start_time_seconds"] {
            XCTAssertGreaterThan(sample(text, name) ?? 0, 0, name)
        }
        XCTAssertTrue(text.contains(#"staffcast_build_info{version=""#), text)

        // docs/operations.md lists exactly what is exported.
        let docs = try String(contentsOf: TestDatabase.packageRoot.appendingPathComponent("docs/operations.md"), encoding: .utf8)
        let section = docs.components(separatedBy: "## Metrics").dropFirst().first?.components(separatedBy: "\n## ").first ?? ""
        let documented = Set(section.split(separator: "\n").compactMap { line -> String? in
            guard line.hasPrefix("| `"), let end = line.dropFirst(3).firstIndex(of: "`") else { return nil }
            let name = String(line[line.index(line.startIndex, offsetBy: 3)..<end])
            return name.hasPrefix("staffcast_") || name.hasPrefix("process_") ? name : nil
        })
        XCTAssertEqual(names.subtracting(documented), [], "exported but not in docs/operations.md")
        // A labelled counter appears with its first increment: the outbox's needs a push, email
        // or webhook delivery (ReachTests see it).
        XCTAssertEqual(documented.subtracting(names).subtracting(["staffcast_outbox_attempts_total"]), [],
                       "in docs/operations.md but not exported")
    }

    /// A WebSocket send is traced through every stage (the first send is always sampled):
    /// `staffcast_stage_seconds` has an observation for each, and none is negative or absurd.
    /// Through the change feed (`local_fanout: false`), every stage; handed on by the server
    /// that committed it, every stage but the feed's wake-up and read.
    func testAWebSocketSendIsTracedThroughEveryStage() throws {
        try traceOneSend(localFanout: false)
    }

    func testASendHandedOnByItsOwnServerIsTracedWithoutTheFeedsStages() throws {
        let text = try traceOneSend(localFanout: true)
        let handedOn = text.split(separator: "\n").first { $0.hasPrefix(#"staffcast_local_fanout_batches_total{outcome="handed_on"}"#) }
        XCTAssertGreaterThanOrEqual(handedOn.flatMap { Double($0.split(separator: " ").last ?? "") } ?? 0, 1, text)
    }

    @discardableResult
    private func traceOneSend(localFanout: Bool) throws -> String {
        let server = try startServer { $0.localFanout = localFanout }
        let staff = try server.connect(fixture.staffToken)
        _ = try staff.subscribe(fixture.event)
        let owner = try server.connect(fixture.ownerToken)
        let stages = ["parse", "queue", "commit"] + (localFanout ? [] : ["wakeup", "read"])
            + ["encode", "handoff", "fanout", "first_write", "last_write"]
        func count(_ text: String, _ stage: String) -> Double? {
            let prefix = #"staffcast_stage_seconds_count{stage="\#(stage)"}"#
            return text.split(separator: "\n").first { $0.hasPrefix(prefix) }.flatMap { Double($0.split(separator: " ").last ?? "") }
        }
        func sum(_ text: String, _ stage: String) -> Double? {
            let prefix = #"staffcast_stage_seconds_sum{stage="\#(stage)"}"#
            return text.split(separator: "\n").first { $0.hasPrefix(prefix) }.flatMap { Double($0.split(separator: " ").last ?? "") }
        }
        // A sampled trace is followed from parse to the last write. The change feed may read a
        // batch before its worker has seen COMMIT return; that sample then ends at `commit`
        // (docs/performance.md). So send until one sample went all the way (at most five; the
        // sampler takes at most one send per 5 ms), waiting for its last write each time. With
        // local fan-out, also until a batch was handed on: under load the feed can read a
        // batch before its worker has handed it on (`feed_first`), and then the feed brings it.
        func handedOn(_ text: String) -> Double {
            let prefix = #"staffcast_local_fanout_batches_total{outcome="handed_on"}"#
            return text.split(separator: "\n").first { $0.hasPrefix(prefix) }.flatMap { Double($0.split(separator: " ").last ?? "") } ?? 0
        }
        func done(_ text: String) -> Bool {
            (count(text, "last_write") ?? 0) >= 1 && (!localFanout || handedOn(text) >= 1)
        }
        var text = ""
        var sends = 0
        repeat {
            sends += 1
            try owner.send(["op": "send", "event_id": fixture.event.uuidString.lowercased(), "message": "Gates open \(sends)",
                            "ref": "s\(sends)"])
            _ = try owner.expect("sent")
            _ = try staff.expect("message")
            _ = try waitUntil(3) {
                text = String(decoding: try server.api(nil).call("GET", "/metrics"), as: UTF8.self)
                return done(text)
            }
        } while !done(text) && sends < 10
        for stage in stages {
            // hand-off and fan-out happen on every loop; the writes on the loops with a recipient.
            let n = count(text, stage) ?? 0
            XCTAssertGreaterThanOrEqual(n, 1, "\(stage) observed for the traced send(s)\n\(text)")
            XCTAssertLessThanOrEqual(n, Double(sends * 2), "no more observations than traced sends on two loops: \(stage)")
            let seconds = try XCTUnwrap(sum(text, stage), stage)
            XCTAssertTrue(seconds >= 0 && seconds < 10, "\(stage): \(seconds) s")
        }
        return text
    }
}
