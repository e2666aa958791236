import Foundation
import StaffcastServer
import XCTest

/// The base of the integration tests: a fresh migrated database with the usual people of one
/// event (`fixture`), and the servers a test starts, stopped and released in `tearDown` —
/// XCTest keeps every test case object until the run ends, so whatever a test holds (database
/// connections, listening sockets, threads) must be let go of there.
class IntegrationTestCase: XCTestCase {
    var fixture: Fixture!
    /// The test's server: the first one `startServer` started (a test may also assign it).
    var server: TestServer!
    private var started: [TestServer] = []
    /// The second staff member of a class that names one (`secondStaffName`).
    private(set) var secondStaff: (id: UUID, token: String)!

    /// A class whose every test needs `server` on the fixture's database says so: setUp starts it.
    class var startsServer: Bool { false }
    /// A class whose tests need a second staff member on the fixture's event names them: setUp
    /// makes them (before any server starts, so that it knows their token from the start).
    class var secondStaffName: String? { nil }

    override func setUpWithError() throws {
        try super.setUpWithError()
        fixture = try Fixture(conninfo: try TestDatabase.create())
        if let name = Self.secondStaffName { secondStaff = try fixture.person(name) }
        if Self.startsServer { try startServer() }
    }

    /// A real server on the fixture's database (a loopback port the kernel chooses).
    @discardableResult
    func startServer(_ configure: (inout ServerConfiguration) -> Void = { _ in }) throws -> TestServer {
        let s = try TestServer(conninfo: fixture.conninfo, configure: configure)
        started.append(s)
        if server == nil { server = s }
        return s
    }

    /// This process's resident memory (VmRSS), KiB: the servers of `startServer` run in it.
    static func residentKiB() -> Int {
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
    }

    override func tearDown() {
        started.forEach { $0.stop() }
        if let server, !started.contains(where: { $0 === server }) { server.stop() }
        started = []
        server = nil
        let conninfo = fixture?.conninfo
        fixture = nil
        if let conninfo { TestDatabase.drop(conninfo) }
        super.tearDown()
    }
}
