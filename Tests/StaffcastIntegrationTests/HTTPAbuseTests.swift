import Foundation
import StaffcastClient
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// What one client can do to the HTTP front with nothing but a TCP connection, found by an
/// attack from outside: real sockets, a real server (in this process, or as `staffcast serve`
/// with a small descriptor limit), real PostgreSQL.
final class HTTPAbuseTests: IntegrationTestCase {
    /// One connection pipelines 20,000 requests for the 60 KB OpenAPI description and never
    /// reads an answer (its receive window 4 KB). The server used to frame and answer them all
    /// into memory (38 MB → 2 GB in 15 s); now it stops framing once 256 KiB of answers wait
    /// (`HTTPConnectionLimits.maxQueuedOutput`), then stops reading, and others are served.
    func testAClientThatPipelinesThousandsOfRequestsAndNeverReadsHoldsBoundedMemory() throws {
        let server = try startServer()
        // Warm up what the first answers allocate once (the description's bytes, buffers).
        XCTAssertEqual(try RawSocket.get(port: server.port, "/v1/openapi.yaml", timeout: 10).status, 200)
        let before = Self.residentKiB()
        let socket = try RawSocket(port: server.port, receiveBuffer: 4_096)
        let one = RawSocket.request("GET", "/v1/openapi.yaml", port: server.port)
        let pipeline = Array((0..<20_000).map { _ in one }.joined())
        // The server stops reading this connection, so the send may not finish: that is the point.
        try? socket.send(pipeline, timeout: 4)
        sleep(3) // what the server would go on answering, were it to
        let grown = Self.residentKiB() - before
        XCTAssertLessThan(grown, 96 * 1_024, "resident memory grew by \(grown / 1_024) MiB for one connection that never reads")
        // Everyone else is served meanwhile.
        XCTAssertEqual(try RawSocket.get(port: server.port, "/healthz", timeout: 2).status, 200)
        // The connection itself still gets its answers, in order, once it reads.
        let first = try socket.readResponse(deadline: Date().addingTimeInterval(10))
        XCTAssertEqual(first.status, 200)
        XCTAssertEqual(first.body.count, try RawSocket.get(port: server.port, "/v1/openapi.yaml", timeout: 10).body.count)
    }

    /// `staffcast serve` with 256 descriptors, and 300 idle connections: once the descriptors
    /// are gone, each loop stops accepting for a second instead of retrying at once (which spun
    /// a core at ~97 % and logged 530,000 lines in 8 s); connections keep being served, and
    /// once the idle ones go, new ones are accepted again.
    func testRunningOutOfDescriptorsPausesAcceptingWithoutSpinningOrFloodingTheLog() throws {
        let serve = try StaffcastProcess(["--nofile=256:256", CommandLineTests.binary, "serve", "--listen", "127.0.0.1:0",
                                          "--database-url", TestDatabase.serverLogin(fixture.conninfo), "--log-level", "warning"],
                                         binary: "/usr/bin/prlimit")
        defer { serve.stop() }
        let pid = serve.process.processIdentifier
        let port = serve.port
        XCTAssertTrue(waitUntil(30) { (try? RawSocket.get(port: port, "/readyz", timeout: 2).status) == 200 }, "the server never became ready")
        let watcher = TestSocket(try WebSocketClient(url: "ws://127.0.0.1:\(port)/v1/ws",
                                                     headers: ["Authorization": "Bearer \(fixture.staffToken)"]))
        _ = try watcher.expect("hello")
        _ = try watcher.subscribe(fixture.event)

        var idle: [RawSocket] = []
        for _ in 0..<300 { if let s = try? RawSocket(port: port, timeout: 1) { idle.append(s) } }
        let cpuBefore = Self.cpuSeconds(pid)
        sleep(3)
        let cpu = Self.cpuSeconds(pid) - cpuBefore
        XCTAssertLessThan(cpu, 1.0, "the server used \(cpu) s of CPU in 3 s with nothing to do but a full descriptor table")
        let lines = serve.stderr.components(separatedBy: "accept failed").count - 1
        XCTAssertGreaterThan(lines, 0, "the descriptors never ran out: the test proves nothing")
        XCTAssertLessThan(lines, 40, "accept failures logged \(lines) times in ~3 s")
        // The subscribed WebSocket is still served.
        _ = try APIClient(server: "http://127.0.0.1:\(port)", token: fixture.ownerToken)
            .sendMessage(event: fixture.event, message: "Still here", type: nil, priority: nil, expiresInMinutes: nil)
        _ = try watcher.expect("message", timeout: 10)
        // The idle connections go: new ones are accepted again within the pause.
        idle.forEach { $0.close() }
        XCTAssertTrue(waitUntil(10) { (try? RawSocket.get(port: port, "/healthz", timeout: 2).status) == 200 },
                      "no new connection was accepted after the idle ones closed")
    }

    /// User plus system CPU seconds of a process (/proc/pid/stat).
    static func cpuSeconds(_ pid: Int32) -> Double {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return 0 }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // After the name: state is field 3, utime 14, stime 15 (1-based), so 11 and 12 here.
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }
}
