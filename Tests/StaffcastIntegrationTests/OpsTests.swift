import Foundation
import StaffcastClient
import StaffcastCore
import XCTest

/// Heartbeats, metrics and status, against a real server.
final class OpsTests: IntegrationTestCase {
    override func setUpWithError() throws {
        try super.setUpWithError()
        try startServer() { $0.heartbeatInterval = 1 }
    }

    func testAClientThatStopsAnsweringPingsIsClosedWithinTwoIntervals() throws {
        let quiet = try server.connect(fixture.staffToken)
        let lively = try server.connect(fixture.adminToken)
        // `lively` reads (and so answers pings); `quiet` reads nothing — reading would answer
        // the pings — until the server has dropped it: after 1 s of silence, a ping, then 1 s
        // unanswered (ticks are once a second, so ~2–3 s; the deadline allows for a loaded
        // machine, where a fixed 3.5 s wait once let the ticks fall behind).
        let dropped = try waitUntil(20, poll: 0) {
            _ = try lively.nextOrNil(timeout: 0.2)
            return (try server.status()["connections"] as? Int) == 1
        }
        XCTAssertTrue(dropped, "the server still holds the silent client")
        // The server sent its close (1001) and, with no answer within the close timeout, reset
        // the socket: the client finds the close frame, or the reset when it answers the pings
        // it reads first (as for every WebSocket since all are framed by staffcast).
        var closed = false
        do {
            while let _ = try quiet.nextOrNil(timeout: 1) {}
        } catch ClientError.closed {
            closed = true
        } catch ClientError.connect(let why) where why.contains("reset") || why.contains("Broken pipe") {
            closed = true
        }
        XCTAssertTrue(closed, "the silent client must have been closed")
        try lively.send(["op": "ping", "ref": "still"])
        XCTAssertEqual(try lively.expect("pong").ref, "still")
        let metrics = String(decoding: try server.api(nil).call("GET", "/metrics"), as: UTF8.self)
        XCTAssertTrue(metrics.contains("staffcast_heartbeat_rtt_seconds"), metrics)
    }

    func testMetricsParseAsPrometheusTextAndMoveWhenMessagesFlow() throws {
        let api = try server.api(nil)
        func sample(_ name: String, _ text: String) -> Double {
            text.split(separator: "\n").filter { $0.hasPrefix(name) && !$0.hasPrefix("#") }
                .compactMap { Double($0.split(separator: " ").last ?? "") }.reduce(0, +)
        }
        let before = String(decoding: try api.call("GET", "/metrics"), as: UTF8.self)
        let staff = try server.subscriber(fixture.staffToken, fixture.event)
        let owner = try server.connect(fixture.ownerToken)
        for i in 0..<3 {
            try owner.send(["op": "send", "event_id": fixture.event.uuidString, "message": "m\(i)", "priority": "high"])
            _ = try owner.expect("sent")
            _ = try staff.expect("message")
        }
        _ = try owner.expectError(["op": "nope"])
        let after = String(decoding: try api.call("GET", "/metrics"), as: UTF8.self)
        // Every non-comment line is `name{labels} value`.
        for line in after.split(separator: "\n") where !line.hasPrefix("#") {
            XCTAssertNotNil(Double(line.split(separator: " ").last ?? ""), "not a sample: \(line)")
            XCTAssertTrue(line.range(of: #"^[a-zA-Z_:][a-zA-Z0-9_:]*(\{.*\})? "#, options: .regularExpression) != nil, String(line))
        }
        XCTAssertEqual(sample("staffcast_messages_sent_total", after) - sample("staffcast_messages_sent_total", before), 3)
        XCTAssertTrue(after.contains(#"staffcast_messages_sent_total{type="broadcast",priority="high"}"#) ||
                      after.contains(#"staffcast_messages_sent_total{priority="high",type="broadcast"}"#), after)
        let deliveries = sample("staffcast_deliveries_total", after) - sample("staffcast_deliveries_total", before)
        XCTAssertGreaterThanOrEqual(deliveries, 6)
        // Every delivery went out in some write; a write carries one frame or several.
        let writes = sample("staffcast_socket_writes_total", after) - sample("staffcast_socket_writes_total", before)
        XCTAssertGreaterThanOrEqual(writes, 1)
        XCTAssertLessThanOrEqual(writes, deliveries)
        XCTAssertGreaterThanOrEqual(sample("staffcast_errors_total", after), 1)
        XCTAssertEqual(sample("staffcast_connections ", after), 2)
        XCTAssertTrue(after.contains("staffcast_delivery_latency_seconds_bucket"))
        XCTAssertFalse(after.contains(fixture.staff.uuidString.lowercased()), "no per-user labels")
    }

    func testStatusCountsSubscribersPerEvent() throws {
        let staff = try server.subscriber(fixture.staffToken, fixture.event)
        let data = try server.api("ops-secret").call("GET", "/v1/status")
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        XCTAssertEqual(object["connections"] as? Int, 1)
        XCTAssertEqual(object["subscriptions"] as? Int, 1)
        let events = try XCTUnwrap(object["events"] as? [[String: Any]])
        XCTAssertEqual(events.first?["event_id"] as? String, fixture.event.uuidString.lowercased())
        XCTAssertEqual(object["listener"] as? String, "listening")
    }

    func testEventStatusReflectsASubscriberConnectingAndLeaving() throws {
        let path = "/v1/events/\(fixture.event.uuidString.lowercased())/status"
        func member(_ name: String) throws -> [String: Any] {
            let data = try server.api(fixture.ownerToken).call("GET", path)
            let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: data) as? [String: Any])
            let staff = try XCTUnwrap(object["staff"] as? [[String: Any]])
            return try XCTUnwrap(staff.first { $0["display_name"] as? String == name })
        }
        XCTAssertEqual(try member("Sam Staff")["connected"] as? Bool, false)
        _ = try fixture.store.send(as: fixture.owner, SendRequest(eventID: fixture.event, message: "one"))
        let staff = try server.subscriber(fixture.staffToken, fixture.event)
        var sam = try member("Sam Staff")
        XCTAssertEqual(sam["connected"] as? Bool, true)
        XCTAssertNotNil(sam["connected_since"] as? String)
        XCTAssertEqual(sam["unread_count"] as? Int, 1)
        XCTAssertEqual(sam["reconnects_last_hour"] as? Int, 0)
        staff.close()
        try waitUntil(3) { try member("Sam Staff")["connected"] as? Bool != true }
        XCTAssertEqual(try member("Sam Staff")["connected"] as? Bool, false)
        let again = try server.subscriber(fixture.staffToken, fixture.event)
        // Wait for a heartbeat round trip (interval 1 s here) to be recorded.
        let until = Date().addingTimeInterval(3)
        while Date() < until { _ = try again.nextOrNil(timeout: 0.2) }
        sam = try member("Sam Staff")
        XCTAssertEqual(sam["reconnects_last_hour"] as? Int, 1)
        XCTAssertNotNil(sam["rtt_ms"] as? Double, "\(sam)")
        // Staff may not see it; the ops token may.
        XCTAssertEqual(try server.api(fixture.staffToken).raw("GET", path).status, 403)
        XCTAssertEqual(try server.api("ops-secret").raw("GET", path).status, 200)
    }

    /// An owner sees only their own events in /v1/status; the ops token sees every event.
    func testStatusShowsAnOwnerOnlyTheirOwnEvents() throws {
        // Every event they own, with nobody connected too (it listed only those with a subscriber here).
        let quiet = try fixture.store.createEvent(name: "Quiet rehearsal", startsAt: nil)
        try fixture.store.grant(event: quiet, user: fixture.owner, level: .owner)
        let alone = try JSONSerialization.jsonObject(with: try server.api(fixture.ownerToken).call("GET", "/v1/status")) as? [String: Any]
        let listed = (alone?["events"] as? [[String: Any]] ?? []).compactMap { $0["event_id"] as? String }
        XCTAssertEqual(Set(listed), [fixture.event.uuidString.lowercased(), quiet.uuidString.lowercased()], "\(alone ?? [:])")
        XCTAssertEqual((alone?["events"] as? [[String: Any]])?.first { $0["event_id"] as? String == quiet.uuidString.lowercased() }?["subscribers"] as? Int, 0)
        let other = try fixture.store.createEvent(name: "Someone else's festival", startsAt: nil)
        let otherOwner = try fixture.store.createUser(name: "Other Owner")
        try fixture.store.grant(event: other, user: otherOwner, level: .owner)
        try fixture.store.grant(event: other, user: fixture.staff, level: .staff)
        let staffOnOther = try server.subscriber(fixture.staffToken, other)
        let staffHere = try server.subscriber(fixture.staffToken, fixture.event)
        let mine = String(decoding: try server.api(fixture.ownerToken).call("GET", "/v1/status"), as: UTF8.self)
        XCTAssertTrue(mine.contains(fixture.event.uuidString.lowercased()))
        XCTAssertFalse(mine.contains(other.uuidString.lowercased()), "another organiser's event leaked: \(mine)")
        XCTAssertFalse(mine.contains("Someone else"))
        XCTAssertFalse(mine.contains("\"loops\""), "server-wide figures are for the ops token: \(mine)")
        XCTAssertFalse(mine.contains("slow_clients_closed"))
        let ops = String(decoding: try server.api("ops-secret").call("GET", "/v1/status"), as: UTF8.self)
        XCTAssertTrue(ops.contains(other.uuidString.lowercased()))
        // An empty bearer token is never the ops token.
        XCTAssertEqual(try server.api("").raw("GET", "/v1/status").status, 401)
    }
}
