import Foundation
import StaffcastCore
import StaffcastServer
import XCTest

/// The configuration as people meet it: the real binary reading an environment variable, a file
/// and a flag (`config show`, `serve --check-config`), and every declared key reaching the server.
final class ConfigurationTests: XCTestCase {
    var dir = ""

    override func setUpWithError() throws {
        dir = NSTemporaryDirectory() + "sc-settings-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(atPath: dir)
    }

    /// Runs the binary with `env` and no other setting from this process's environment.
    func run(_ args: [String], env: [String: String] = [:]) throws -> CommandLineTests.Outcome {
        var clean: [String: String] = [:]
        for key in ConfigKey.all { for name in [key.environmentName] + key.formerEnvironmentNames { clean[name] = "" } }
        clean["STAFFCAST_CONFIG"] = ""
        return try CommandLineTests.execute(args, env: clean.merging(env) { $1 })
    }

    /// The line of `key` in a printout.
    func line(_ key: String, in output: String) -> String {
        output.split(separator: "\n").first { $0.hasPrefix("  \(key): ") }.map(String.init) ?? "(no line for \(key))"
    }

    func testConfigShowAndCheckConfigSayEachValueAndWhereItCameFrom() throws {
        let file = dir + "/staffcast.yaml"
        try """
            listen: "127.0.0.1:7001"
            database_workers: 7
            recent_window: 512
            ops_token: "s3cret-s3cret-s3cret"
            smtp_url: "smtp://mailer:smtpsecret@mail.example.org:587"
            """.write(toFile: file, atomically: true, encoding: .utf8)
        let env = ["STAFFCAST_DATABASE_WORKERS": "5", "STAFFCAST_MAX_CONNECTIONS": "77",
                   "STAFFCAST_DATA_DIR": dir + "/data"]
        let args = ["--config", file, "--database-workers", "2", "--heartbeat-interval=9",
                    "--database-url", "postgresql://staffcast_server:pgsecret@db.internal/staffcast"]
        for command in [["config", "show"], ["serve", "--check-config"]] {
            let r = try run(command + args, env: env)
            XCTAssertEqual(r.status, 0, "\(command): \(r.stderr)")
            let out = r.stdout
            XCTAssertTrue(line("database_workers", in: out).hasSuffix("(flag --database-workers)"), out)
            XCTAssertTrue(line("database_workers", in: out).contains(": 2 "), out)
            XCTAssertTrue(line("heartbeat_interval", in: out).contains(": 9 "), out)
            XCTAssertTrue(line("max_connections", in: out).hasSuffix("(env STAFFCAST_MAX_CONNECTIONS)"), out)
            XCTAssertTrue(line("max_connections", in: out).contains(": 77 "), out)
            XCTAssertTrue(line("recent_window", in: out).hasSuffix("(file \(file))"), out)
            XCTAssertTrue(line("listen", in: out).contains("127.0.0.1:7001"), out)
            XCTAssertTrue(line("idle_timeout", in: out).hasSuffix("(default)"), out)
            XCTAssertTrue(line("push_vapid_key", in: out).contains(dir + "/data/push_vapid_key.pem"), out)
            XCTAssertTrue(line("ops_token", in: out).contains("***"), out)
            XCTAssertTrue(line("smtp_url", in: out).contains("smtp://mailer:***@mail.example.org:587"), out)
            XCTAssertTrue(line("database_url", in: out).contains("staffcast_server:***@db.internal"), out)
            for secret in ["s3cret", "smtpsecret", "pgsecret"] { XCTAssertFalse(out.contains(secret), "\(command) shows \(secret)") }
            for key in ConfigKey.all { XCTAssertTrue(out.contains("\n  \(key.name): "), "\(command) does not print \(key.name)") }
            XCTAssertEqual(r.stderr, "")
        }
        XCTAssertTrue(try run(["serve", "--check-config"] + args, env: env).stdout.hasPrefix("configuration is valid:"))
    }

    func testABadValueIsOneLineNamingTheKeyAndItsSourceWithExit64() throws {
        let file = dir + "/staffcast.yaml"
        try "idle_timeout: 0\n".write(toFile: file, atomically: true, encoding: .utf8)
        let cases: [([String], [String: String], String)] = [
            (["--config", file], [:], "staffcast: config file \(file): 'idle_timeout' must be a number from 1 to 3600 [invalid]"),
            ([], ["STAFFCAST_SEND_BURST": "lots"], "staffcast: environment variable STAFFCAST_SEND_BURST: 'send_burst' must be a number from 1 to 100000 [invalid]"),
            (["--max-connections-per-user", "0"], [:], "staffcast: flag --max-connections-per-user: 'max_connections_per_user' must be a whole number from 1 to 10000000 [invalid]"),
            (["--max-conections", "3"], [:], "staffcast: unknown option '--max-conections' (did you mean '--max-connections'? every setting's flag is listed by staffcast serve --help) [invalid]"),
        ]
        for (args, env, expected) in cases {
            for command in [["config", "show"], ["serve", "--check-config"]] {
                let r = try run(command + args, env: env)
                XCTAssertEqual(r.status, 64, "\(command + args) \(env): \(r.stderr)")
                XCTAssertEqual(r.stderr, expected + "\n")
                XCTAssertEqual(r.stdout, "", "nothing is printed as if valid")
            }
        }
    }

    /// YAML takes a key given twice (the last wins) and reads 010 as octal 8; a person meant
    /// neither (attack round 5), so both are refused naming the key.
    func testAKeySetTwiceOrANumberWithALeadingZeroIsRefused() throws {
        let file = dir + "/surprise.yaml"
        for (text, expected) in [
            ("listen: 0.0.0.0:8080\nidle_timeout: 60\nlisten: 127.0.0.1:9000\n", "'listen' is set twice in the file; keep one"),
            ("database_workers: 010\n", "'database_workers' 010 has a leading zero, which YAML reads as an octal number; write it without the zero"),
        ] {
            try text.write(toFile: file, atomically: true, encoding: .utf8)
            let r = try run(["serve", "--check-config", "--config", file])
            XCTAssertEqual(r.status, 64, r.stderr)
            XCTAssertEqual(r.stderr, "staffcast: config file \(file): \(expected) [invalid]\n")
        }
        try "database_workers: 10\nrecent_window: 1000\n".write(toFile: file, atomically: true, encoding: .utf8)
        XCTAssertEqual(try run(["serve", "--check-config", "--config", file]).status, 0, "plain numbers stay fine")
    }

    func testCheckConfigRefusesAHalfTLSPairWithExit64() throws {
        let r = try run(["serve", "--check-config", "--tls-cert", dir + "/cert.pem"])
        XCTAssertEqual(r.status, 64, r.stderr)
        XCTAssertEqual(r.stderr, "staffcast: tls_cert and tls_key go together: set both (the certificate and its private key, PEM files) or neither [invalid]\n")
        let missing = try run(["serve", "--check-config"], env: ["STAFFCAST_TLS_CERT": dir + "/cert.pem", "STAFFCAST_TLS_KEY": dir + "/key.pem"])
        XCTAssertEqual(missing.status, 64, missing.stderr)
        XCTAssertTrue(missing.stderr.hasPrefix("staffcast: cannot read tls_cert \(dir)/cert.pem"), missing.stderr)
    }

    func testServeHelpListsEveryKeysFlag() throws {
        let r = try run(["serve", "--help"])
        XCTAssertEqual(r.status, 0)
        for key in ConfigKey.all {
            XCTAssertTrue(r.stdout.contains(key.flagName + " <"), "serve --help does not list \(key.flagName)")
            XCTAssertTrue(r.stdout.contains(key.environmentName), "serve --help does not name \(key.environmentName)")
        }
    }

    func testTheReferenceCommandPrintsTheCommittedReference() throws {
        let r = try run(["config", "reference"])
        XCTAssertEqual(r.status, 0, r.stderr)
        let committed = try String(contentsOf: TestDatabase.packageRoot.appendingPathComponent("docs/configuration.md"), encoding: .utf8)
        XCTAssertEqual(r.stdout, committed, "run `staffcast config reference > docs/configuration.md`")
    }

    /// Each key changes the server's configuration: none is declared and then forgotten. The
    /// database and logging keys are the command line's (DatabaseOptions), not the server's.
    func testEveryServerKeyReachesTheServerConfiguration() throws {
        let commandLineOnly: Set = ["database_url", "migrate_database_url", "data_dir", "log_level", "log_format"]
        let defaults = ServerConfiguration(try ConfigResolver.resolve(ConfigLayers()))
        XCTAssertEqual(defaults, ServerConfiguration(), "the declared defaults are the server's defaults")
        for key in ConfigKey.all {
            var layers = ConfigLayers()
            layers.setFlag(key, Self.otherValue(for: key))
            let changed = ServerConfiguration(try ConfigResolver.resolve(layers))
            if commandLineOnly.contains(key.name) {
                XCTAssertEqual(changed, defaults, "\(key.name) is not expected to reach the server")
            } else {
                XCTAssertNotEqual(changed, defaults, "\(key.name) is declared but never reaches ServerConfiguration")
            }
        }
    }

    /// A valid value other than the default.
    static func otherValue(for key: ConfigKey) -> String {
        switch key.kind {
        case .integer(let r): return String(key.defaultValue?.integer == r.lowerBound ? r.lowerBound + 1 : r.lowerBound)
        case .number(let r): return ConfigValue.number(key.defaultValue?.number == r.lowerBound ? r.lowerBound + 1 : r.lowerBound).display
        case .flag: return key.defaultFlag ? "false" : "true"
        case .choice(let c): return c.first { $0 != key.defaultText } ?? c[0]
        case .text(.hostPort): return "127.0.0.1:1"
        case .text(.minimumLength(let n, _)): return String(repeating: "x", count: n)
        case .text(.url(let schemes, _)): return schemes[0] == "mailto" ? "mailto:ops@example.org" : "\(schemes[0])://h.example.org"
        case .text(.bareAddress): return "ops@example.org"
        case .text(.anything): return "/somewhere/else"
        }
    }
}
