import Foundation
import StaffcastClient
import StaffcastCore
import StaffcastPostgres
import StaffcastServer
import XCTest

/// Fan-out through the database: several servers, revocation, catch-up, slow clients, shutdown.
final class FanoutTests: IntegrationTestCase {
    func testTwoServersOnOneDatabaseDeliverEachOthersMessages() throws {
        let a = try startServer()
        let b = try startServer()
        let staffOnB = try b.subscriber(fixture.staffToken, fixture.event)
        let staffOnA = try a.subscriber(fixture.staffToken, fixture.event)

        let ownerOnA = try a.connect(fixture.ownerToken)
        try ownerOnA.send(["op": "send", "event_id": fixture.event.uuidString, "message": "from A"])
        let sent = try XCTUnwrap(try ownerOnA.expect("sent").message)
        XCTAssertEqual(try staffOnB.expect("message").message?.id, sent.id)
        XCTAssertEqual(try staffOnA.expect("message").message?.id, sent.id)

        let r = try b.api(fixture.adminToken).raw("POST", "/v1/events/\(fixture.event.uuidString)/messages",
                                                  body: Data("from B".utf8), contentType: "text/plain")
        XCTAssertEqual(r.status, 201)
        XCTAssertEqual(try staffOnA.expect("message").message?.message, "from B")
        XCTAssertEqual(try staffOnB.expect("message").message?.message, "from B")
        try staffOnA.expectSilence(0.5) // exactly once each
    }

    func testRevokeEndsALiveSubscriptionWithinTwoSeconds() throws {
        let a = try startServer()
        let b = try startServer()
        let staff = try b.subscriber(fixture.staffToken, fixture.event)
        let started = Date()
        try fixture.store.revoke(event: fixture.event, user: fixture.staff)
        guard case .accessRevoked(let event) = try staff.expect("access_revoked", timeout: 2) else { return XCTFail() }
        XCTAssertEqual(event, fixture.event)
        XCTAssertLessThan(Date().timeIntervalSince(started), 2)
        // Nothing more arrives for that event, whichever server it is sent through.
        _ = try fixture.store.send(as: fixture.owner, SendRequest(eventID: fixture.event, message: "after revoke"))
        try staff.expectSilence(1)
        // Now the event is one they cannot see: answered as if it did not exist.
        XCTAssertEqual(try staff.expectError(["op": "subscribe", "event_id": fixture.event.uuidString]).code, .notFound)
        _ = a
    }

    func testASubscriberThatWasAwayGetsExactlyWhatItMissed() throws {
        let server = try startServer()
        var staff = try server.connect(fixture.staffToken)
        _ = try staff.subscribe(fixture.event)
        _ = try fixture.store.send(as: fixture.owner, SendRequest(eventID: fixture.event, message: "before"))
        let last = try XCTUnwrap(try staff.expect("message").message?.seq)
        staff.close()
        for i in 1...3 { _ = try fixture.store.send(as: fixture.owner, SendRequest(eventID: fixture.event, message: "missed \(i)")) }
        staff = try server.connect(fixture.staffToken)
        let (history, unread) = try staff.subscribe(fixture.event, sinceSeq: last)
        XCTAssertEqual(history.map(\.message), ["missed 1", "missed 2", "missed 3"])
        XCTAssertEqual(unread, 4)
        _ = try fixture.store.send(as: fixture.owner, SendRequest(eventID: fixture.event, message: "live again"))
        XCTAssertEqual(try staff.expect("message").message?.message, "live again")
        try staff.expectSilence(0.5)
    }

    func testSubscribingWhileMessagesFlowLosesAndDoublesNothing() throws {
        let server = try startServer()
        let (conninfo, owner, event) = (fixture.conninfo, fixture.owner, fixture.event)
        let sender = Thread {
            let store = try? Store(PGConnection(conninfo: conninfo))
            for i in 0..<60 {
                _ = try? store?.send(as: owner, SendRequest(eventID: event, message: "flow \(i)"))
                usleep(5_000) // a steady flow, not one burst: the subscribe must land in the middle of it
            }
        }
        sender.start()
        XCTAssertTrue(waitUntil(5) { fixture.messageCount > 0 }, "the flow did not start") // subscribe mid-flow
        let staff = try server.connect(fixture.staffToken)
        let (history, _) = try staff.subscribe(fixture.event, sinceSeq: 0)
        var seen = history.map(\.message)
        let deadline = Date().addingTimeInterval(10)
        while seen.count < 60 && Date() < deadline {
            if let frame = try staff.nextOrNil(timeout: 1), case .message(let m) = frame { seen.append(m.message) }
        }
        XCTAssertEqual(seen, (0..<60).map { "flow \($0)" })
    }

    func testASlowClientIsClosedAndTheServerStaysBounded() throws {
        let server = try startServer { $0.outboundMaxFrames = 16 }
        let slow = try server.subscriber(fixture.staffToken, fixture.event)
        // 100 messages committed at once arrive in one batch: more than the slow client's queue.
        try fixture.store.conn.transaction { tx in
            for i in 0..<100 {
                try tx.query("""
                    INSERT INTO staff_messages (event_id, sender_id, message, message_type, priority)
                    VALUES ($1, $2, $3, 'broadcast', 'normal')
                    """, [fixture.event.uuidString, fixture.owner.uuidString, "burst \(i)"])
            }
        }
        XCTAssertEqual(try slow.closeCode(idle: 3), 4008)
        // The server is up and a reconnecting client catches up on everything.
        let again = try server.connect(fixture.staffToken)
        let (history, _) = try again.subscribe(fixture.event, sinceSeq: 0)
        XCTAssertEqual(history.count, 100)
    }

    func testGracefulStopClosesClientsWith1001() throws {
        let server = try startServer()
        let staff = try server.subscriber(fixture.staffToken, fixture.event)
        let stopped = DispatchSemaphore(value: 0)
        let core = server.server
        Thread { core.stop(); stopped.signal() }.start()
        XCTAssertEqual(try staff.closeCode(idle: 5), 1001)
        XCTAssertEqual(stopped.wait(timeout: .now() + 10), .success)
        XCTAssertThrowsError(try WebSocketClient(url: server.ws, headers: ["Authorization": "Bearer \(fixture.staffToken)"]))
    }

    func testEventStatusOnOneServerSeesStaffConnectedToAnother() throws {
        let a = try startServer { $0.nodeID = "node-a" }
        let b = try startServer { $0.nodeID = "node-b" }
        let path = "/v1/events/\(fixture.event.uuidString.lowercased())/status"
        func sam() throws -> [String: Any] {
            let data = try a.api(fixture.ownerToken).call("GET", path)
            let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: data) as? [String: Any])
            return try XCTUnwrap((object["staff"] as? [[String: Any]])?.first { $0["display_name"] as? String == "Sam Staff" })
        }
        let staffOnB = try b.subscriber(fixture.staffToken, fixture.event)
        try waitUntil(8, poll: 0.2) { try sam()["connected"] as? Bool == true }
        XCTAssertEqual(try sam()["connected"] as? Bool, true)
        XCTAssertEqual(try sam()["nodes"] as? [String], ["node-b"])
        staffOnB.close()
        try waitUntil(8, poll: 0.2) { try sam()["connected"] as? Bool == false }
        XCTAssertEqual(try sam()["connected"] as? Bool, false)
    }

    func testADatabaseOutageIsReportedAndTheServerRecovers() throws {
        let server = try startServer()
        let owner = try server.connect(fixture.ownerToken)
        // Cut every connection of this test's database, as a restart would.
        let admin = try PGConnection(conninfo: try TestDatabase.cluster().conninfo(database: "postgres"))
        let dbname = try PGConnection(conninfo: fixture.conninfo).query("SELECT current_database()").string(0, 0) ?? ""
        try admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()", [dbname])
        // The first request on a dead connection may fail with `unavailable`; the next works.
        var sent = false
        for _ in 0..<5 where !sent {
            try owner.send(["op": "send", "event_id": fixture.event.uuidString, "message": "after outage"])
            let frame = try owner.next()
            if case .sent = frame { sent = true } else if case .error(_, let e) = frame {
                XCTAssertEqual(e.code, .unavailable, e.message)
            }
        }
        XCTAssertTrue(sent)
        XCTAssertTrue(waitUntil(10) { server.server.readiness.ready })
    }
}

typealias StaffcastServerConfiguration = ServerConfiguration
