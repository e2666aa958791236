import Foundation
import StaffcastClient
import StaffcastCore
import StaffcastPostgres
import XCTest

/// Faults under load: several senders sending in bursts to one event, several subscribers
/// receiving, and then the server is SIGKILLed, or PostgreSQL stops in the middle. Afterwards
/// every *acknowledged* message is in the table and reached every subscriber exactly once
/// (subscribers reconnect with `since_seq`); unacknowledged ones may or may not exist, but
/// nothing ever arrives twice.
final class FaultTests: XCTestCase {
    static let config = """
        send_burst: 100000
        send_rate_per_second: 100000
        max_in_flight_per_connection: 64
        listener_poll_interval: 0.5
        shutdown_grace: 1
        database_workers: 2

        """

    /// An event with `subscribers` staff and `senders` admins (the fixture's owner and admin
    /// among them), and their tokens.
    struct Crowd {
        var fixture: Fixture
        var subscriberTokens: [String]
        var senderTokens: [String]
    }

    static func crowd(_ conninfo: String, subscribers: Int = 5, senders: Int = 3) throws -> Crowd {
        let f = try Fixture(conninfo: conninfo)
        var subs = [f.staffToken]
        for i in 1..<subscribers {
            subs.append(try f.person("Staff \(i)").token)
        }
        var sends = [f.ownerToken, f.adminToken]
        for i in 2..<max(2, senders) {
            sends.append(try f.person("Admin \(i)", level: .admin).token)
        }
        return Crowd(fixture: f, subscriberTokens: subs, senderTokens: Array(sends.prefix(senders)))
    }

    static func total(_ senders: [RecordingSender]) -> Int { senders.reduce(0) { $0 + $1.acked.count } }

    /// Every acknowledged message is in the table, and every subscriber got each exactly once
    /// and nothing twice.
    func assertExactlyOnce(_ senders: [RecordingSender], _ subscribers: [RecordingSubscriber], owner conninfo: String,
                           file: StaticString = #filePath, line: UInt = #line) throws {
        var acked: [UUID: Int64] = [:]
        for s in senders { acked.merge(s.acked) { a, _ in a } }
        let ids = "{" + acked.keys.map { $0.uuidString.lowercased() }.joined(separator: ",") + "}"
        let stored = try PGConnection(conninfo: conninfo).query("SELECT count(*) FROM staff_messages WHERE id = ANY ($1::uuid[])",
                                                                [ids]).int(0, 0)
        XCTAssertEqual(stored, acked.count, "an acknowledged message is missing from the table", file: file, line: line)
        // Give the subscribers time to catch up with everything acknowledged.
        _ = waitUntil(30) { subscribers.allSatisfy { s in let got = s.received; return acked.keys.allSatisfy { got[$0] != nil } } }
        for (i, s) in subscribers.enumerated() {
            let got = s.received
            let missing = acked.keys.filter { got[$0] == nil }
            XCTAssertEqual(missing.count, 0, "subscriber \(i) never got \(missing.count) of \(acked.count) acknowledged messages",
                           file: file, line: line)
            let twice = got.filter { $0.value > 1 }
            XCTAssertEqual(twice.count, 0, "subscriber \(i) got \(twice.count) messages more than once", file: file, line: line)
        }
        // Whatever a subscriber got (acknowledged or not) was committed.
        let everything = Set(subscribers.flatMap { $0.received.keys })
        let all = "{" + everything.map { $0.uuidString.lowercased() }.joined(separator: ",") + "}"
        XCTAssertEqual(try PGConnection(conninfo: conninfo).query("SELECT count(*) FROM staff_messages WHERE id = ANY ($1::uuid[])",
                                                                  [all]).int(0, 0), everything.count,
                       "a subscriber got a message that is not in the table", file: file, line: line)
    }

    func testSIGKILLOfTheServerDuringABurstLosesAndDoublesNothingAcknowledged() throws {
        let conninfo = try makeTestDatabase()
        let crowd = try Self.crowd(conninfo)
        let login = TestDatabase.serverLogin(conninfo)
        var serve = try ServeProcess(databaseURL: login, migrateURL: conninfo, config: Self.config)
        defer { serve.stop() }
        let port = serve.port
        let subscribers = crowd.subscriberTokens.map { RecordingSubscriber(url: serve.ws, token: $0, event: crowd.fixture.event) }
        subscribers.forEach { $0.start() }
        XCTAssertTrue(waitUntil(20) { subscribers.allSatisfy { $0.subscribedCount >= 1 } }, "not all subscribed")
        let senders = crowd.senderTokens.enumerated().map {
            RecordingSender(url: serve.ws, token: $1, event: crowd.fixture.event, name: "sender\($0)")
        }
        senders.forEach { $0.start() }

        XCTAssertTrue(waitUntil(30) { Self.total(senders) >= 60 }, "no burst before the kill")
        serve.kill9()
        let ackedBeforeKill = Self.total(senders)
        usleep(300_000) // a moment with no server at all: every client sees its connection fail
        serve = try ServeProcess(port: port, databaseURL: login, migrateURL: conninfo, config: Self.config)
        XCTAssertTrue(waitUntil(30) { Self.total(senders) >= ackedBeforeKill + 60 }, "no sends acknowledged after the restart")
        senders.forEach { $0.pause() }
        XCTAssertTrue(waitUntil(10) { senders.allSatisfy(\.settled) }, "answers to the sends in flight never came")
        senders.forEach { $0.stop() }

        try assertExactlyOnce(senders, subscribers, owner: conninfo)
        subscribers.forEach { $0.stop() }
        XCTAssertTrue(subscribers.allSatisfy { $0.connectionCount >= 2 && $0.subscribedCount >= 2 },
                      "every subscriber reconnected and subscribed again after the kill")
        XCTAssertGreaterThan(ackedBeforeKill, 0)
        print("SIGKILL under load: \(ackedBeforeKill) acknowledged before the kill, \(Self.total(senders)) in all, "
              + "\(senders.reduce(0) { $0 + $1.attempts }) sends tried, to \(subscribers.count) subscribers")
    }

    /// A cluster of its own (it is stopped and started), migrated, with a crowd.
    static func ownCluster() throws -> (EmbeddedCluster, Crowd, String) {
        let dir = "/tmp/sc-fault-\(UUID().uuidString.prefix(8))"
        let cluster = try EmbeddedCluster(dataDir: dir)
        try cluster.ensureRunning(detached: true)
        try Migrator(migrations: try TestDatabase.migrations(), logger: TestDatabase.logger).migrate(PGConnection(conninfo: cluster.conninfo))
        return (cluster, try crowd(cluster.conninfo), dir)
    }

    /// A cluster of its own with its crowd (`ownCluster`), and a server on it for senders that go
    /// as fast as they can (`maxInFlight` sends each); the test's teardown stops the server, then
    /// the cluster, and removes the cluster's folder.
    func ownClusterAndUnlimitedServer(maxInFlight: Int) throws -> (EmbeddedCluster, Crowd, TestServer) {
        let (cluster, crowd, dir) = try Self.ownCluster()
        addTeardownBlock {
            try? cluster.stop()
            try? FileManager.default.removeItem(atPath: dir)
        }
        let server = try TestServer(conninfo: cluster.conninfo) {
            $0.sendBurst = 100_000
            $0.sendRatePerSecond = 100_000
            $0.maxInFlightPerConnection = maxInFlight
        }
        addTeardownBlock { server.stop() } // runs first: teardown blocks run last added first
        return (cluster, crowd, server)
    }

    func testAPostgreSQLRestartUnderLoadIsAClear503AndTheServerRecoversLosingAndDoublingNothing() throws {
        let (cluster, crowd, server) = try ownClusterAndUnlimitedServer(maxInFlight: 64)
        let event = crowd.fixture.event
        let subscribers = crowd.subscriberTokens.map { RecordingSubscriber(url: server.ws, token: $0, event: event) }
        subscribers.forEach { $0.start() }
        XCTAssertTrue(waitUntil(20) { subscribers.allSatisfy { $0.subscribedCount >= 1 } }, "not all subscribed")
        let senders = crowd.senderTokens.enumerated().map { RecordingSender(url: server.ws, token: $1, event: event, name: "sender\($0)") }
        senders.forEach { $0.start() }
        XCTAssertTrue(waitUntil(30) { Self.total(senders) >= 60 }, "no burst before the restart")

        try cluster.stop()
        let ackedBeforeStop = Self.total(senders)
        // While it is down: sends are refused with unavailable (WebSocket) and 503 (HTTP),
        // saying nothing was stored; the process serves and says it is not ready.
        XCTAssertTrue(waitUntil(10) { senders.contains { ($0.refused["unavailable"] ?? 0) > 0 } },
                      "no send was refused with unavailable while the database was down: \(senders.map(\.refused))")
        let path = "/v1/events/\(event.uuidString.lowercased())/messages"
        let r = try server.api(crowd.fixture.ownerToken).raw("POST", path, body: Data("while down".utf8), contentType: "text/plain")
        XCTAssertEqual(r.status, 503)
        XCTAssertTrue(String(decoding: r.body, as: UTF8.self).contains("nothing was stored"), String(decoding: r.body, as: UTF8.self))
        XCTAssertTrue(waitUntil(10) { (try? server.api(nil).raw("GET", "/readyz").status) == 503 })
        XCTAssertEqual(try server.api(nil).raw("GET", "/healthz").status, 200)
        usleep(1_000_000) // down a while longer, senders still trying: what is tested

        try cluster.ensureRunning(detached: true)
        // It recovers by itself: ready again, and sends are acknowledged again.
        XCTAssertTrue(waitUntil(30) { (try? server.api(nil).raw("GET", "/readyz").status) == 200 }, "not ready again")
        let ackedWhileDown = Self.total(senders)
        XCTAssertTrue(waitUntil(30) { Self.total(senders) >= ackedWhileDown + 60 }, "no sends acknowledged after the restart")
        senders.forEach { $0.pause() }
        XCTAssertTrue(waitUntil(10) { senders.allSatisfy(\.settled) }, "answers to the sends in flight never came")
        senders.forEach { $0.stop() }

        try assertExactlyOnce(senders, subscribers, owner: cluster.conninfo)
        subscribers.forEach { $0.stop() }
        print("PostgreSQL restart under load: \(ackedBeforeStop) acknowledged before, \(Self.total(senders)) in all, "
              + "refused: \(senders.map(\.refused))")
    }

    func testNothingIsAcknowledgedBeforeItIsCommittedWhenPostgreSQLDiesMidBatch() throws {
        let (cluster, crowd, server) = try ownClusterAndUnlimitedServer(maxInFlight: 256)
        // Wide windows, no spacing: batches of group commit in flight when PostgreSQL dies.
        let senders = crowd.senderTokens.enumerated().map {
            RecordingSender(url: server.ws, token: $1, event: crowd.fixture.event, name: "batch\($0)", window: 128, spacing: 0)
        }
        senders.forEach { $0.start() }
        XCTAssertTrue(waitUntil(30) { Self.total(senders) >= 200 }, "no batch in flight")
        // Immediate: a crash as far as PostgreSQL knows; uncommitted work is gone on restart.
        try cluster.stop(mode: "immediate")
        usleep(1_000_000) // the senders go on for a moment against the dead database: part of the scenario
        senders.forEach { $0.pause() }
        XCTAssertTrue(waitUntil(10) { senders.allSatisfy(\.settled) }, "answers to the sends in flight never came")
        senders.forEach { $0.stop() }
        try cluster.ensureRunning(detached: true)

        var acked: [UUID: Int64] = [:]
        for s in senders { acked.merge(s.acked) { a, _ in a } }
        let ids = "{" + acked.keys.map { $0.uuidString.lowercased() }.joined(separator: ",") + "}"
        let stored = try PGConnection(conninfo: cluster.conninfo)
            .query("SELECT count(*) FROM staff_messages WHERE id = ANY ($1::uuid[])", [ids]).int(0, 0)
        XCTAssertGreaterThan(acked.count, 0)
        XCTAssertEqual(stored, acked.count, "a message was acknowledged that PostgreSQL had not committed")
        let tried = senders.reduce(0) { $0 + $1.attempts }
        XCTAssertGreaterThan(tried, acked.count, "some sends were in flight when PostgreSQL died")
        print("PostgreSQL crash mid-batch: \(acked.count) acknowledged, all in the table; \(tried) tried")
    }
}
