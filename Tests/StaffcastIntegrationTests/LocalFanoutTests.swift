import Foundation
import StaffcastClient
import StaffcastCore
import StaffcastPostgres
import StaffcastServer
import Synchronization
import XCTest

/// The committing server hands its own sends to its subscribers at once (`local_fanout`,
/// `ChangeFeed.handOn`), while the change feed stays the truth for other servers and for
/// order: each message reaches each subscriber once, in seq order, after every access change
/// committed before it.
final class LocalFanoutTests: IntegrationTestCase {
    private func server(localFanout: Bool = true) throws -> TestServer {
        try startServer {
            $0.localFanout = localFanout
            $0.serviceThreads = 2
            $0.sendBurst = 10_000
            $0.sendRatePerSecond = 10_000
            $0.maxConnectionsPerUser = 100
        }
    }

    /// `staffcast_local_fanout_batches_total{outcome=…}` of a server.
    private func outcomes(_ server: TestServer) throws -> [String: Double] {
        let text = String(decoding: try server.api(nil).call("GET", "/metrics"), as: UTF8.self)
        var out: [String: Double] = [:]
        for line in text.split(separator: "\n") where line.hasPrefix("staffcast_local_fanout_batches_total{") {
            guard let name = line.firstMatch(of: #/outcome="([a-z_]+)"/#)?.1, let value = Double(line.split(separator: " ").last ?? "") else { continue }
            out[String(name)] = value
        }
        return out
    }

    /// Sends through a WebSocket on one server and through HTTP on the other at the same time,
    /// while another thread revokes and grants a third person's access over and over (each an
    /// access change both servers' feeds must apply in order). Every subscriber on both servers
    /// gets every message exactly once, in seq order.
    func testTwoServersDeliverEveryMessageOnceInOrderWhileAccessChangesInterleave() throws {
        let a = try server()
        let b = try server()
        let watchers = [try a.subscriber(fixture.staffToken, fixture.event), try a.subscriber(fixture.staffToken, fixture.event),
                        try b.subscriber(fixture.staffToken, fixture.event), try b.subscriber(fixture.staffToken, fixture.event)]
        let toggled = try fixture.person("Toggled").id
        let (conninfo, event, adminToken) = (fixture.conninfo, fixture.event, fixture.adminToken)

        let toggler = StoppableThread()
        let toggles = Atomic<Int>(0)
        toggler.start(name: "access-toggler") {
            guard let store = try? Store(PGConnection(conninfo: conninfo)) else { return }
            while !toggler.isStopped {
                _ = try? store.revoke(event: event, user: toggled)
                try? store.grant(event: event, user: toggled, level: .staff)
                toggles.add(1, ordering: .relaxed)
                usleep(2_000)
            }
        }
        defer { if !toggler.isStopped { toggler.stop() } }

        // B: 40 sends over HTTP, one at a time, from a thread.
        let httpSeqs = Mutex<[Int64]>([])
        let httpFailures = Mutex<[String]>([])
        let address = b.http
        let httpDone = DispatchSemaphore(value: 0)
        Thread {
            defer { httpDone.signal() }
            do {
                let api = try APIClient(server: address, token: adminToken)
                for i in 0..<40 {
                    let m = try api.sendMessage(event: event, message: "http \(i)", type: nil, priority: nil, expiresInMinutes: nil)
                    httpSeqs.withLock { $0.append(m.seq) }
                }
            } catch {
                httpFailures.withLock { $0.append("\(error)") }
            }
        }.start()

        // A: 120 sends over a WebSocket, ten in flight at a time.
        let owner = try a.connect(fixture.ownerToken)
        var wsSeqs: [Int64] = []
        for burst in 0..<12 {
            for j in 0..<10 {
                try owner.send(["op": "send", "event_id": event.uuidString.lowercased(), "message": "ws \(burst).\(j)", "ref": "s\(burst).\(j)"])
            }
            for _ in 0..<10 { wsSeqs.append(try XCTUnwrap(try owner.expect("sent", timeout: 10).message).seq) }
        }
        XCTAssertEqual(httpDone.wait(timeout: .now() + 30), .success, "the HTTP sender did not finish")
        toggler.stop()
        XCTAssertEqual(httpFailures.withLock { $0 }, [])
        XCTAssertGreaterThan(toggles.load(ordering: .relaxed), 0, "no access change interleaved")

        // A last message marks the end: what a watcher got before it is all it got.
        try owner.send(["op": "send", "event_id": event.uuidString.lowercased(), "message": "the end", "ref": "end"])
        _ = try owner.expect("sent")
        let expected = (wsSeqs + httpSeqs.withLock { $0 }).sorted()
        XCTAssertEqual(expected.count, 160)
        let deadline = Date().addingTimeInterval(30)
        for (i, watcher) in watchers.enumerated() {
            let (got, ended) = try watcher.seqs(until: "the end", deadline: deadline)
            XCTAssertTrue(ended, "watcher \(i) did not get the last message")
            XCTAssertEqual(got, expected, "watcher \(i) (server \(i < 2 ? "A" : "B")): every message exactly once, in seq order")
        }
        // The servers handed their own batches on (the feed brought the others').
        let onA = try outcomes(a), onB = try outcomes(b)
        print("local fan-out on A: \(onA); on B: \(onB)")
        XCTAssertGreaterThan(onA["handed_on"] ?? 0, 0, "A handed none of its WebSocket sends on itself: \(onA)")
        XCTAssertGreaterThan(onB["handed_on"] ?? 0, 0, "B handed none of its HTTP sends on itself: \(onB)")
    }

    /// A revoke that committed before a send is applied before it on the server that committed
    /// the send, however late that server's change feed is: the revoked person gets
    /// `access_revoked`, never the message. The feed is held back for certain: a transaction of
    /// the test locks api_tokens, which the feed's snapshot reads (the token log's join) and a
    /// send does not, so the send commits and is answered while the feed waits with the revoke.
    func testARevokeCommittedBeforeASendHidesItOnTheSendersServer() throws {
        let a = try server()
        let (carol, carolToken) = try fixture.person("Carol")
        let watcher = try a.subscriber(carolToken, fixture.event)
        let owner = try a.connect(fixture.ownerToken)
        let event = fixture.event.uuidString.lowercased()
        let blocker = try PGConnection(conninfo: fixture.conninfo)
        for round in 0..<5 {
            try blocker.execute("BEGIN")
            try blocker.execute("LOCK TABLE api_tokens IN ACCESS EXCLUSIVE MODE")
            XCTAssertTrue(try fixture.store.revoke(event: fixture.event, user: carol))
            try owner.send(["op": "send", "event_id": event, "message": "after revoke \(round)", "ref": "r\(round)"])
            let seq = try XCTUnwrap(try owner.expect("sent").message).seq
            // Committed and answered; the feed still waits with the revoke: nothing may arrive.
            if let frame = try watcher.nextOrNil(timeout: 0.3) {
                XCTFail("round \(round): \(frame.op) \(frame.message?.message ?? "") arrived before the revoke was applied")
            }
            try blocker.execute("ROLLBACK")
            // Then the revoke, and still not the message.
            var revoked = false
            while !revoked {
                let frame = try watcher.next(timeout: 5)
                if case .accessRevoked = frame { revoked = true }
                if case .message(let m) = frame { XCTFail("round \(round): \"\(m.message)\" reached a revoked person") }
            }
            try fixture.store.grant(event: fixture.event, user: carol, level: .staff)
            _ = try watcher.subscribe(fixture.event, sinceSeq: seq)
            // Granted again: the next send arrives.
            try owner.send(["op": "send", "event_id": event, "message": "granted \(round)", "ref": "g\(round)"])
            _ = try owner.expect("sent")
            guard case .message(let m) = try watcher.expect("message") else { return XCTFail() }
            XCTAssertEqual(m.message, "granted \(round)")
        }
        let counted = try outcomes(a)
        XCTAssertGreaterThanOrEqual(counted["feed_behind"] ?? 0, 5, "each send after a revoke waited for the feed: \(counted)")
    }

    /// A server whose wake-ups are only its own send batches, all handed on, skips the read
    /// (`staffcast_listener_reads_skipped_total`); one it could not hand on (to a team, whose
    /// audience the feed reads) is still read at once. The poll interval is 60 s here, so a
    /// skipped read that should have happened would show as a message a minute late.
    func testTheListenerSkipsReadsForItsOwnHandedOnSendsButNotForOthers() throws {
        let a = try startServer {
            $0.listenerPollInterval = 60
            $0.sendBurst = 10_000
            $0.sendRatePerSecond = 10_000
        }
        _ = try fixture.store.createTeam(as: fixture.owner, event: fixture.event, name: "Security", kind: .team)
        try fixture.store.addTeamMember(as: fixture.owner, event: fixture.event, team: "Security", member: fixture.staff)
        let staff = try a.subscriber(fixture.staffToken, fixture.event)
        let owner = try a.connect(fixture.ownerToken)
        let event = fixture.event.uuidString.lowercased()
        for i in 0..<20 {
            try owner.send(["op": "send", "event_id": event, "message": "own \(i)", "ref": "o\(i)"])
            _ = try owner.expect("sent")
            guard case .message(let m) = try staff.expect("message") else { return XCTFail() }
            XCTAssertEqual(m.message, "own \(i)")
        }
        // To a team: left to the feed, which must read it now, not at the next poll.
        try owner.send(["op": "send", "event_id": event, "message": "security only", "teams": ["Security"], "ref": "t"])
        _ = try owner.expect("sent")
        guard case .message(let targeted) = try staff.expect("message", timeout: 10) else { return XCTFail() }
        XCTAssertEqual(targeted.message, "security only")
        // Sent through the database directly (another origin): read at once too.
        _ = try fixture.store.send(as: fixture.owner, SendRequest(eventID: fixture.event, message: "from elsewhere"))
        guard case .message(let other) = try staff.expect("message", timeout: 10) else { return XCTFail() }
        XCTAssertEqual(other.message, "from elsewhere")

        let text = String(decoding: try a.api(nil).call("GET", "/metrics"), as: UTF8.self)
        let skipped = text.split(separator: "\n").first { $0.hasPrefix("staffcast_listener_reads_skipped_total") }
            .flatMap { Double($0.split(separator: " ").last ?? "") } ?? 0
        XCTAssertGreaterThan(skipped, 0, "no wake-up was served without a read")
        let counted = try outcomes(a)
        XCTAssertGreaterThanOrEqual(counted["targeted"] ?? 0, 1, "\(counted)")
    }

    /// Deleting a user (its token and access deletes take the gate exclusively, sql/014) while a
    /// send batch that holds the gate shared inserts a message by that user (its foreign key
    /// waits for the profile's row): both finish, no deadlock. Before `deleteUser` took the gate
    /// first it locked the profile, then waited for the gate, and the batch waited for the
    /// profile: PostgreSQL aborted one of them after `deadlock_timeout`.
    func testDeletingAUserWhileASendBatchHoldsTheGateIsNoDeadlock() throws {
        let (dora, _) = try fixture.person("Dora", level: .admin)
        let batch = try PGConnection(conninfo: fixture.conninfo)
        try batch.execute("BEGIN")
        try batch.execute("SELECT pg_advisory_xact_lock_shared(7354000, 0)")
        let failure = Mutex<String?>(nil)
        let conninfo = fixture.conninfo
        let deleted = DispatchSemaphore(value: 0)
        Thread {
            do { _ = try Store(PGConnection(conninfo: conninfo)).deleteUser(dora) } catch { failure.withLock { $0 = "\(error)" } }
            deleted.signal()
        }.start()
        usleep(300_000) // the delete is waiting now (for the gate, or, before, for it after the profile)
        try batch.query("""
            INSERT INTO staff_messages (event_id, sender_id, message, message_type, priority)
            VALUES ($1, $2, 'radio check', 'broadcast', 'normal')
            """, [fixture.event.uuidString, dora.uuidString])
        try batch.execute("COMMIT")
        XCTAssertEqual(deleted.wait(timeout: .now() + 10), .success, "the delete did not finish")
        XCTAssertNil(failure.withLock { $0 })
        XCTAssertEqual(try fixture.count("SELECT count(*) FROM profiles WHERE id = $1 AND deleted_at IS NOT NULL", [dora.uuidString]), 1,
                       "kept for history: a message names them")
    }

    /// `local_fanout: false`: every message waits for the change feed, and is still delivered.
    func testWithLocalFanoutOffTheFeedDeliversEverything() throws {
        let a = try server(localFanout: false)
        let watcher = try a.subscriber(fixture.staffToken, fixture.event)
        let owner = try a.connect(fixture.ownerToken)
        var seqs: [Int64] = []
        for i in 0..<5 {
            try owner.send(["op": "send", "event_id": fixture.event.uuidString.lowercased(), "message": "off \(i)", "ref": "o\(i)"])
            seqs.append(try XCTUnwrap(try owner.expect("sent").message).seq)
        }
        var got: [Int64] = []
        while got.count < 5, case .message(let m) = try watcher.expect("message") { got.append(m.seq) }
        XCTAssertEqual(got, seqs)
        let counted = try outcomes(a)
        XCTAssertEqual(counted["handed_on"] ?? 0, 0, "\(counted)")
        XCTAssertGreaterThan(counted["off"] ?? 0, 0, "\(counted)")
    }
}
