import Foundation
import Logging
import StaffcastClient
import StaffcastCore
import StaffcastPostgres
import XCTest

/// The real `staffcast` executable, as an organiser uses it: admin set-up on the embedded
/// cluster, `serve`, `send`, and a graceful SIGTERM that leaves no PostgreSQL behind.
final class CommandLineTests: XCTestCase {
    static var binary: String {
        let beside = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("staffcast").path
        if FileManager.default.isExecutableFile(atPath: beside) { return beside }
        return TestDatabase.packageRoot.appendingPathComponent(".build/debug/staffcast").path
    }

    struct Outcome {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    @discardableResult
    func run(_ args: [String], stdin: String? = nil, env: [String: String] = [:]) throws -> Outcome {
        try Self.execute(args, stdin: stdin, env: env)
    }

    /// Runs the `staffcast` executable with `args`, feeding `stdin`, with `env` over this
    /// process's environment.
    static func execute(_ args: [String], stdin: String? = nil, env: [String: String] = [:]) throws -> Outcome {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: Self.binary)
        p.arguments = args
        var environment = ProcessInfo.processInfo.environment
        environment.merge(env) { $1 }
        p.environment = environment
        let out = Pipe(), err = Pipe(), input = Pipe()
        p.standardOutput = out
        p.standardError = err
        p.standardInput = input
        try p.run()
        if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
        try input.fileHandleForWriting.close()
        let o = out.fileHandleForReading.readDataToEndOfFile()
        let e = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return Outcome(status: p.terminationStatus, stdout: String(decoding: o, as: UTF8.self),
                       stderr: String(decoding: e, as: UTF8.self))
    }

    func testAdminServeSendAndGracefulStopOnTheEmbeddedCluster() throws {
        let dataDir = "/tmp/sc-cli-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: dataDir) }
        let env = ["STAFFCAST_DATA_DIR": dataDir]
        // Admin commands never create the cluster: migrate does (as serve would).
        let migrated = try run(["migrate"], env: env)
        XCTAssertEqual(migrated.status, 0, migrated.stderr)
        func admin(_ args: [String]) throws -> String {
            let r = try run(["admin"] + args, env: env)
            XCTAssertEqual(r.status, 0, r.stderr)
            return r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let event = try admin(["event", "create", "--name", "CLI Fest", "--starts-at", "2026-07-01T10:00:00Z"])
        XCTAssertNotNil(UUID(uuidString: event), "stdout must be the id alone: \(event)")
        let organiser = try admin(["user", "create", "--name", "Olivia"])
        let staff = try admin(["user", "create", "--name", "Sam"])
        XCTAssertNotNil(UUID(uuidString: staff))
        _ = try admin(["grant", "--event", event, "--user", organiser, "--level", "owner"])
        _ = try admin(["grant", "--event", event, "--user", staff, "--level", "staff"])
        let organiserToken = try admin(["token", "issue", "--user", organiser])
        let staffToken = try admin(["token", "issue", "--user", staff])
        XCTAssertTrue(TokenHasher.looksValid(organiserToken), organiserToken)
        let bad = try run(["admin", "grant", "--event", event, "--user", staff, "--level", "boss"], env: env)
        XCTAssertNotEqual(bad.status, 0)

        // serve on a free port, parse the port from its banner
        let serve = Process()
        serve.executableURL = URL(fileURLWithPath: Self.binary)
        serve.arguments = ["serve", "--listen", "127.0.0.1:0", "--log-level", "warning"]
        serve.environment = ProcessInfo.processInfo.environment.merging(env) { $1 }
        let banner = Pipe()
        serve.standardOutput = banner
        serve.standardError = FileHandle.nullDevice
        try serve.run()
        let (port, text) = ServeBanner.port(from: banner.fileHandleForReading, seconds: 60)
        XCTAssertGreaterThan(port, 0, "no banner: \(text)")
        let server = "http://127.0.0.1:\(port)"

        let socket = TestSocket(try WebSocketClient(url: "ws://127.0.0.1:\(port)/v1/ws", headers: ["Authorization": "Bearer \(staffToken)"]))
        _ = try socket.expect("hello")
        _ = try socket.subscribe(UUID(uuidString: event)!)

        let sent = try run(["send", "--server", server, "--token", organiserToken, "--event", event, "--priority", "urgent",
                            "--type", "emergency", "Evacuate hall B"])
        XCTAssertEqual(sent.status, 0, sent.stderr)
        let id = sent.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        XCTAssertNotNil(UUID(uuidString: id))
        guard case .message(let live) = try socket.expect("message") else { return XCTFail() }
        XCTAssertEqual(live.id.uuidString.lowercased(), id)
        XCTAssertEqual(live.priority, .urgent)

        let piped = try run(["send", "--server", server, "--event", event, "-"], stdin: "From stdin\n",
                            env: ["STAFFCAST_TOKEN": organiserToken])
        XCTAssertEqual(piped.status, 0, piped.stderr)
        XCTAssertEqual(try socket.expect("message").message?.message, "From stdin")

        let refused = try run(["send", "--server", server, "--token", staffToken, "--event", event, "hi"])
        XCTAssertEqual(refused.status, 2, "forbidden: exit 2")
        XCTAssertEqual(refused.stderr.split(separator: "\n").count, 1, refused.stderr)
        XCTAssertTrue(refused.stderr.contains("admins and owners"), refused.stderr)
        XCTAssertEqual(try run(["send", "--server", server, "--token", organiserToken, "--event", event, "--priority", "max", "x"]).status, 1)
        XCTAssertEqual(try run(["send", "--server", "http://127.0.0.1:1", "--token", organiserToken, "--event", event, "x"]).status, 3,
                       "unreachable: exit 3")

        // SIGTERM: clients get 1001, the process exits 0 within 10 s, PostgreSQL is stopped.
        let started = Date()
        serve.terminate()
        XCTAssertEqual(try socket.closeCode(idle: 10), 1001)
        serve.waitUntilExit()
        XCTAssertEqual(serve.terminationStatus, 0)
        XCTAssertLessThan(Date().timeIntervalSince(started), 10)
        XCTAssertFalse(try EmbeddedCluster(dataDir: dataDir).isRunning, "the embedded cluster must be stopped")
    }

    /// Three servers on one embedded cluster: one killed (kill -9), the other two stopped at
    /// the same moment. The last one out stops PostgreSQL; before, each stopping server counted
    /// the other's sessions as a user and both left it running.
    func testServersStoppingTogetherAfterOneWasKilledStopTheEmbeddedCluster() throws {
        let dataDir = "/tmp/sc-three-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: dataDir) }
        let args = ["serve", "--listen", "127.0.0.1:0", "--data-dir", dataDir, "--log-level", "info"]
        let servers = try (0..<3).map { _ in try StaffcastProcess(args) }
        let cluster = try EmbeddedCluster(dataDir: dataDir)
        XCTAssertTrue(cluster.isRunning)
        kill(servers[0].process.processIdentifier, SIGKILL)
        servers[0].process.waitUntilExit()
        servers[1].process.terminate()
        servers[2].process.terminate()
        for server in servers[1...] { server.process.waitUntilExit() }
        XCTAssertEqual(servers[1].process.terminationStatus, 0)
        XCTAssertEqual(servers[2].process.terminationStatus, 0)
        XCTAssertFalse(cluster.isRunning, "the last server out must stop the embedded PostgreSQL: \(servers[1].stderr) \(servers[2].stderr)")
    }

    /// A server attached to the embedded cluster by `--database-url` holds no lock on the data
    /// dir. Stopping (or restarting after kill -9) the server that started the cluster stopped
    /// PostgreSQL under it (attack round): now its sessions keep the cluster running, and the
    /// last one out still stops it.
    func testAServerAttachedByURLKeepsTheEmbeddedClusterUp() throws {
        let dataDir = "/tmp/sc-url-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: dataDir) }
        var owner = try StaffcastProcess(["serve", "--listen", "127.0.0.1:0", "--data-dir", dataDir])
        let cluster = try EmbeddedCluster(dataDir: dataDir)
        let url = cluster.conninfo(database: EmbeddedCluster.databaseName, user: EmbeddedCluster.serverLogin)
        let attached = try StaffcastProcess(["serve", "--listen", "127.0.0.1:0", "--database-url", url, "--data-dir", dataDir + "-unused"])
        func attachedReady() -> Bool {
            (try? APIClient(server: "http://127.0.0.1:\(attached.port)", token: nil).raw("GET", "/readyz").status) == 200
        }
        XCTAssertTrue(waitUntil(10, attachedReady))

        owner.process.terminate()
        owner.process.waitUntilExit()
        XCTAssertTrue(cluster.isRunning, "stopped under the attached server: \(owner.stderr)")
        XCTAssertTrue(owner.stderr.contains("leaving the embedded PostgreSQL running"), owner.stderr)
        XCTAssertTrue(attachedReady())

        // A killed owner's cluster is taken over as it runs, not restarted under the other one.
        owner = try StaffcastProcess(["serve", "--listen", "127.0.0.1:0", "--data-dir", dataDir])
        kill(owner.process.processIdentifier, SIGKILL)
        owner.process.waitUntilExit()
        let pid = try String(contentsOfFile: dataDir + "/postgres/postmaster.pid", encoding: .utf8).split(separator: "\n").first
        owner = try StaffcastProcess(["serve", "--listen", "127.0.0.1:0", "--data-dir", dataDir])
        XCTAssertEqual(try String(contentsOfFile: dataDir + "/postgres/postmaster.pid", encoding: .utf8).split(separator: "\n").first, pid,
                       "restarted under the attached server: \(owner.stderr)")
        XCTAssertTrue(attachedReady())

        attached.process.terminate()
        attached.process.waitUntilExit()
        owner.process.terminate()
        owner.process.waitUntilExit()
        XCTAssertFalse(cluster.isRunning, "the last one out stops it: \(owner.stderr)")
    }

    /// The embedded PostgreSQL killed under a serving server (the OOM killer, a crash) is started
    /// again by the server, which then is ready by itself; it used to stay "not ready" until
    /// someone ran `staffcast cluster start` (attack round). One stopped on purpose stays stopped.
    func testTheServerStartsItsEmbeddedClusterAgainAfterACrash() throws {
        let dataDir = "/tmp/sc-crash-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: dataDir) }
        let serve = try StaffcastProcess(["serve", "--listen", "127.0.0.1:0", "--data-dir", dataDir])
        defer { serve.process.terminate(); serve.process.waitUntilExit() }
        let api = try APIClient(server: "http://127.0.0.1:\(serve.port)", token: nil)
        func ready() -> Bool { (try? api.raw("GET", "/readyz").status) == 200 }
        XCTAssertTrue(waitUntil(10, ready))
        let cluster = try EmbeddedCluster(dataDir: dataDir)
        let pidText = try String(contentsOfFile: dataDir + "/postgres/postmaster.pid", encoding: .utf8)
        let postmaster = try XCTUnwrap(pidText.split(separator: "\n").first.flatMap { pid_t($0) })
        kill(postmaster, SIGKILL)
        XCTAssertTrue(waitUntil(10) { !ready() }, "the server noticed")
        XCTAssertTrue(waitUntil(60, poll: 0.2, ready), "not ready again by itself: \(serve.stderr)")
        XCTAssertTrue(serve.stderr.contains("starting it again"), serve.stderr)
        XCTAssertTrue(cluster.isRunning)

        try cluster.stop()
        // Two of the watchdog's checks: a stop is not a crash. (A wait for something not to
        // happen: a fixed time by nature.)
        Thread.sleep(forTimeInterval: 4.5)
        XCTAssertFalse(cluster.isRunning, "a cluster stopped on purpose was started again")
    }

    /// The last user stops the embedded PostgreSQL holding the data dir's lock, as a start holds
    /// it: a server starting meanwhile (a restart by hand, systemd's) used to find the cluster
    /// running, then have it stopped under it by the server leaving, and fail.
    func testTheLastUserStopsTheClusterOnlyBetweenStarts() throws {
        let dataDir = "/tmp/sc-lock-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: dataDir) }
        let target = try DatabaseTarget(databaseURL: nil, dataDir: dataDir)
        let cluster = try XCTUnwrap(target.cluster)
        // A start in progress elsewhere holds the data dir's lock.
        let starting = open(dataDir + "/.lock", O_RDWR)
        XCTAssertEqual(flock(starting, LOCK_EX), 0)
        let released = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            target.release(onlyIfStartedHere: false, logger: Logger(label: "test"))
            released.signal()
        }
        XCTAssertEqual(released.wait(timeout: .now() + 1), .timedOut, "the stop waits for the start to finish")
        XCTAssertTrue(cluster.isRunning)
        close(starting)
        XCTAssertEqual(released.wait(timeout: .now() + 30), .success)
        XCTAssertFalse(cluster.isRunning, "then the last user stops it")
    }

    func testHelpTeachesByExample() throws {
        for args in [["--help"], ["serve", "--help"], ["send", "--help"], ["admin", "--help"], ["admin", "grant", "--help"],
                     ["watch", "--help"]] {
            let r = try run(args)
            XCTAssertEqual(r.status, 0)
            XCTAssertTrue(r.stdout.contains("staffcast"), args.joined(separator: " "))
            XCTAssertTrue(r.stdout.lowercased().contains("example"), "no example in \(args): \(r.stdout)")
        }
    }

    /// swift-argument-parser wraps each over-long line on its own, leaving a two-word orphan under
    /// it in an 80-column terminal; so every line of every command's description must fit. Read
    /// with COLUMNS=500 so the parser wraps nothing and the lines are as written.
    func testEveryCommandsHelpFitsAnEightyColumnTerminal() throws {
        var paths: [[String]] = [[]]
        var seen = 0
        while let path = paths.popLast() {
            let r = try run(path + ["--help"], env: ["COLUMNS": "500"])
            XCTAssertEqual(r.status, 0, path.joined(separator: " "))
            seen += 1
            let sections = r.stdout.components(separatedBy: "USAGE:")
            for line in sections[0].split(separator: "\n").dropFirst() where line.count > HelpText.width {
                XCTFail("staffcast \(path.joined(separator: " ")) --help: \(line.count) columns: \(line)")
            }
            guard let list = r.stdout.components(separatedBy: "SUBCOMMANDS:\n").dropFirst().first else { continue }
            // The list ends at its first blank line (then "See 'staffcast help …'").
            for line in list.components(separatedBy: "\n\n")[0].split(separator: "\n") {
                guard line.hasPrefix("  "), !line.hasPrefix("   "),
                      let name = line.split(separator: " ").first, name != "help" else { continue }
                paths.append(path + [String(name)])
            }
        }
        XCTAssertGreaterThan(seen, 30, "the walk must reach the nested commands")
    }

    /// On a terminal whose TERM the machine does not know (an old scanner, a serial console),
    /// ncurses' initscr() printed "Error opening terminal" and exited; watch now says why and
    /// prints one line a message. Run in a real pseudo-terminal through util-linux `script`.
    func testWatchOnAnUnknownTerminalFallsBackToLines() throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/script")
        let command = "TERM=no-such-terminal \(Self.binary) watch --server http://127.0.0.1:1 --token sc_unused "
            + "--event \(UUID().uuidString.lowercased())"
        p.arguments = ["-qec", command, "/dev/null"]
        let out = Pipe()
        p.standardOutput = out
        p.standardError = out
        p.standardInput = Pipe()
        let output = OutputCollector()
        out.fileHandleForReading.readabilityHandler = { h in output.append(h.availableData) }
        try p.run()
        // Until the first reconnect line (it came within 2.5 s), then what is left.
        waitUntil(30) { output.text.contains("cannot reach the server") }
        p.terminate()
        p.waitUntilExit()
        out.fileHandleForReading.readabilityHandler = nil
        output.append(out.fileHandleForReading.readDataToEndOfFile())
        let text = output.text
        XCTAssertFalse(text.contains("Error opening terminal"), text)
        XCTAssertTrue(text.contains("does not know the terminal type 'no-such-terminal'"), text)
        XCTAssertTrue(text.contains("cannot reach the server"), "watch goes on in line mode: \(text)")
    }

    func testMissingTokenIsExplained() throws {
        let r = try run(["send", "--server", "http://127.0.0.1:1", "--event", UUID().uuidString, "hi"],
                        env: ["STAFFCAST_TOKEN": "", "HOME": "/nonexistent"])
        XCTAssertEqual(r.status, 2)
        XCTAssertTrue(r.stderr.contains("no token"), r.stderr)
    }

    func testConfigurationPrecedenceAndBadKeys() throws {
        let dir = NSTemporaryDirectory() + "sc-config-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let file = dir + "/staffcast.yaml"
        try "listen: \"127.0.0.1:7001\"\ndatabase_workers: 7\nheartbeat_interval: 9\nops_token: \"s3cret-s3cret-s3cret\"\n".write(toFile: file, atomically: true, encoding: .utf8)
        var r = try run(["serve", "--config", file, "--check-config"], env: ["STAFFCAST_LISTEN": "", "STAFFCAST_WORKERS": ""])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("listen: 127.0.0.1:7001"), r.stdout)
        XCTAssertTrue(r.stdout.contains("database_workers: 7"))
        XCTAssertTrue(r.stdout.contains("ops_token: ***"), "secrets are masked")
        XCTAssertFalse(r.stdout.contains("s3cret"))
        // environment beats the file, flags beat the environment
        r = try run(["serve", "--config", file, "--check-config"], env: ["STAFFCAST_LISTEN": "127.0.0.1:7002", "STAFFCAST_WORKERS": "3"])
        XCTAssertTrue(r.stdout.contains("listen: 127.0.0.1:7002"), r.stdout)
        XCTAssertTrue(r.stdout.contains("database_workers: 3"), r.stdout)
        r = try run(["serve", "--config", file, "--check-config", "--listen", "127.0.0.1:7003", "--workers", "2"],
                    env: ["STAFFCAST_LISTEN": "127.0.0.1:7002"])
        XCTAssertTrue(r.stdout.contains("listen: 127.0.0.1:7003"), r.stdout)
        XCTAssertTrue(r.stdout.contains("database_workers: 2"), r.stdout)
        // an empty or short ops token would open /v1/status: refused, naming the key
        for weak in ["\"\"", "\"   \"", "\"short\""] {
            try "ops_token: \(weak)\n".write(toFile: file, atomically: true, encoding: .utf8)
            r = try run(["serve", "--config", file, "--check-config"])
            XCTAssertNotEqual(r.status, 0, "ops_token \(weak) must be refused")
            XCTAssertTrue(r.stderr.contains("ops_token"), r.stderr)
        }
        // the new transport keys are known and checked
        try "service_threads: 2\nmax_connections_per_user: 5\nwrite_stall_timeout: 10\n".write(toFile: file, atomically: true, encoding: .utf8)
        r = try run(["serve", "--config", file, "--check-config"])
        XCTAssertEqual(r.status, 0, r.stderr)
        try "max_connections_per_user: 0\n".write(toFile: file, atomically: true, encoding: .utf8)
        r = try run(["serve", "--config", file, "--check-config"])
        XCTAssertNotEqual(r.status, 0)
        XCTAssertTrue(r.stderr.contains("max_connections_per_user"), r.stderr)
        // unknown keys and bad values are errors that name the key
        try "listen: \"127.0.0.1:7001\"\nheartbeat: 5\n".write(toFile: file, atomically: true, encoding: .utf8)
        r = try run(["serve", "--config", file, "--check-config"])
        XCTAssertEqual(r.status, 64) // a configuration error, as a command-line error
        XCTAssertTrue(r.stderr.contains("unknown key 'heartbeat'"), r.stderr)
        try "database_workers: lots\n".write(toFile: file, atomically: true, encoding: .utf8)
        r = try run(["serve", "--config", file, "--check-config"])
        XCTAssertEqual(r.status, 64)
        XCTAssertTrue(r.stderr.contains("'database_workers'"), r.stderr)
        r = try run(["serve", "--check-config", "--listen", "nowhere"])
        XCTAssertEqual(r.status, 64)
        XCTAssertTrue(r.stderr.contains("HOST:PORT"), r.stderr)
    }
}
