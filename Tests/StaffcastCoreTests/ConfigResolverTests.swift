import Foundation
import StaffcastCore
import XCTest

/// The configuration declarations and their resolution: precedence, names, checks, masking, and
/// the reference docs that are written from them.
final class ConfigResolverTests: XCTestCase {
    func layers(env: [String: String] = [:], file: [String: ConfigInput]? = nil, flags: [String] = []) throws -> ConfigLayers {
        var l = ConfigLayers(environment: env, filePath: file == nil ? nil : "/etc/staffcast.yaml", file: file ?? [:])
        try l.readFlags(flags)
        return l
    }

    func testPrecedenceIsFlagThenEnvironmentThenFileThenDefault() throws {
        let file: [String: ConfigInput] = ["database_workers": .integer(7), "send_burst": .integer(40), "node_id": .text("from-file")]
        var e = try ConfigResolver.resolve(layers(file: file))
        XCTAssertEqual(e.integer(.databaseWorkers), 7)
        XCTAssertEqual(e.source(.databaseWorkers), .file(path: "/etc/staffcast.yaml"))
        XCTAssertEqual(e.integer(.heartbeatInterval), 20)
        XCTAssertEqual(e.source(.heartbeatInterval), .defaultValue)

        e = try ConfigResolver.resolve(layers(env: ["STAFFCAST_DATABASE_WORKERS": "3", "STAFFCAST_NODE_ID": "from-env"], file: file))
        XCTAssertEqual(e.integer(.databaseWorkers), 3)
        XCTAssertEqual(e.source(.databaseWorkers), .environment(name: "STAFFCAST_DATABASE_WORKERS"))
        XCTAssertEqual(e.text(.nodeID), "from-env")
        XCTAssertEqual(e.number(.sendBurst), 40, "the file still counts where nothing overrides it")

        e = try ConfigResolver.resolve(layers(env: ["STAFFCAST_DATABASE_WORKERS": "3"], file: file,
                                              flags: ["--database-workers", "2", "--node-id=from-flag"]))
        XCTAssertEqual(e.integer(.databaseWorkers), 2)
        XCTAssertEqual(e.source(.databaseWorkers), .flag(name: "--database-workers"))
        XCTAssertEqual(e.text(.nodeID), "from-flag")
    }

    func testFormerNamesAreStillReadAndTheRegularOneWins() throws {
        var e = try ConfigResolver.resolve(layers(env: ["STAFFCAST_WORKERS": "5"], flags: ["--heartbeat", "9"]))
        XCTAssertEqual(e.integer(.databaseWorkers), 5)
        XCTAssertEqual(e.source(.databaseWorkers).description, "env STAFFCAST_WORKERS")
        XCTAssertEqual(e.integer(.heartbeatInterval), 9)
        XCTAssertEqual(e.source(.heartbeatInterval).description, "flag --heartbeat")
        e = try ConfigResolver.resolve(layers(env: ["STAFFCAST_WORKERS": "5", "STAFFCAST_DATABASE_WORKERS": "6"]))
        XCTAssertEqual(e.integer(.databaseWorkers), 6)
    }

    func testAnEmptyEnvironmentValueIsUnsetAndAnEmptyFlagUnsetsAFile() throws {
        var e = try ConfigResolver.resolve(layers(env: ["STAFFCAST_LISTEN": ""], file: ["listen": .text("127.0.0.1:7001")]))
        XCTAssertEqual(e.text(.listen), "127.0.0.1:7001")
        e = try ConfigResolver.resolve(layers(file: ["tls_cert": .text("/x.pem")], flags: ["--tls-cert", ""]))
        XCTAssertNil(e.text(.tlsCert))
        XCTAssertEqual(e.source(.tlsCert), .flag(name: "--tls-cert"))
        e = try ConfigResolver.resolve(layers(file: ["node_id": .null]))
        XCTAssertNil(e.text(.nodeID), "`key:` with no value is the same as leaving it out")
    }

    func testFlagsTakeBothFormsAndABareSwitch() throws {
        let e = try ConfigResolver.resolve(layers(flags: ["--metrics-require-token", "--send-rate-per-second=2.5",
                                                          "--listen", "[::1]:9000"]))
        XCTAssertTrue(e.flag(.metricsRequireToken))
        XCTAssertEqual(e.number(.sendRatePerSecond), 2.5)
        XCTAssertEqual(ConfigKey.splitHostPort(e.text(.listen) ?? "")?.host, "::1")
        let off = try ConfigResolver.resolve(layers(flags: ["--metrics-require-token=false"]))
        XCTAssertFalse(off.flag(.metricsRequireToken))
    }

    func testABadValueNamesTheKeyAndItsSource() throws {
        func message(_ build: () throws -> ConfigLayers) -> String {
            do {
                _ = try ConfigResolver.resolve(try build())
                return "no error"
            } catch {
                return "\(error)"
            }
        }
        XCTAssertEqual(message { try layers(file: ["database_workers": .text("lots")]) },
                       "config file /etc/staffcast.yaml: 'database_workers' must be a whole number from 1 to 64")
        XCTAssertEqual(message { try layers(env: ["STAFFCAST_MAX_CONNECTIONS_PER_USER": "0"]) },
                       "environment variable STAFFCAST_MAX_CONNECTIONS_PER_USER: 'max_connections_per_user' must be a whole number from 1 to 10000000")
        XCTAssertEqual(message { try layers(flags: ["--listen", "nowhere"]) },
                       "flag --listen: 'listen' must be HOST:PORT such as 0.0.0.0:8080 (not 'nowhere')")
        XCTAssertTrue(message { try layers(file: ["ops_token": .text("short")]) }.contains("'ops_token' must be at least 16 characters"))
        XCTAssertTrue(message { try layers(file: ["ops_token": .text("                    ")]) }.contains("'ops_token'"))
        XCTAssertTrue(message { try layers(env: ["STAFFCAST_SMTP_URL": "http://mail"]) }.contains("'smtp_url' must be a smtp: or smtps: URL"))
        XCTAssertTrue(message { try layers(file: ["email_from": .text("Ops <ops@example.org>")]) }.contains("bare address"))
        XCTAssertTrue(message { try layers(file: ["metrics_require_token": .text("maybe")]) }.contains("true or false"))
        XCTAssertTrue(message { try layers(env: ["STAFFCAST_LOG_FORMAT": "xml"]) }.contains("'log_format' must be text or json"))
        XCTAssertTrue(message { try layers(file: ["event_loop": .text("uv")]) }
            .hasSuffix("'event_loop' must be ev or poll; uv is not offered: Debian's libwebsockets 4.1.6 libuv plugin closes a descriptor twice at shutdown"))
        XCTAssertTrue(message { try layers(file: ["heartbeat": .integer(5)]) }.contains("unknown key 'heartbeat'"))
        XCTAssertEqual(message { try layers(flags: ["--databse-workers", "2"]) },
                       "unknown option '--databse-workers' (did you mean '--database-workers'? every setting's flag is listed by staffcast serve --help)")
        XCTAssertEqual(message { try layers(file: ["heartbeat": .integer(5)]) },
                       "config file /etc/staffcast.yaml: unknown key 'heartbeat' (did you mean 'heartbeat_interval'? every key: docs/configuration.md)")
        XCTAssertTrue(message { try layers(file: ["colour_scheme": .text("dark")]) }.contains("(known keys: data_dir, database_url"),
                      "nothing close: every key is listed")
        XCTAssertEqual(message { try layers(flags: ["--database-workers"]) }, "--database-workers needs a value")
        // An overridden bad value in the file is still an error: the file is wrong.
        XCTAssertTrue(message { try layers(env: ["STAFFCAST_DATABASE_WORKERS": "2"], file: ["database_workers": .integer(0)]) }
            .hasPrefix("config file /etc/staffcast.yaml: 'database_workers'"))
    }

    func testSecretsAreMaskedFromTheDeclaration() throws {
        let e = try ConfigResolver.resolve(layers(file: [
            "ops_token": .text("s3cret-s3cret-s3cret"),
            "database_url": .text("postgresql://staffcast_server:pgsecret@db.internal/staffcast"),
            "smtp_url": .text("smtp://mailer:smtpsecret@mail.example.org:587"),
        ], flags: ["--migrate-database-url", "host=db user=staffcast password=ownersecret"]))
        let text = e.printout().joined(separator: "\n")
        for secret in ["s3cret", "pgsecret", "smtpsecret", "ownersecret"] {
            XCTAssertFalse(text.contains(secret), "\(secret) shown in \(text)")
        }
        XCTAssertTrue(text.contains("ops_token: ***"), text)
        XCTAssertTrue(text.contains("database_url: postgresql://staffcast_server:***@db.internal/staffcast"), text)
        XCTAssertTrue(text.contains("smtp_url: smtp://mailer:***@mail.example.org:587"), text)
        XCTAssertTrue(text.contains("password=***"), text)
        XCTAssertEqual(ConfigKey.all.filter { $0.secrecy != .shown }.map(\.name).sorted(),
                       ["database_url", "migrate_database_url", "ops_token", "smtp_url"])
    }

    /// libpq's key=value form quotes a value with spaces (and escapes a quote inside): the whole
    /// quoted value is hidden, not its first word (attack round 5 saw `password=*** QUOTED'`).
    func testAQuotedConninfoPasswordIsHiddenWhole() {
        for (conninfo, shown) in [
            ("host=h password='SECRET QUOTED' dbname=x", "host=h password=*** dbname=x"),
            (#"host=h password = 'it\'s secret' user=u"#, "host=h password=*** user=u"),
            ("host=h password=plain", "host=h password=***"),
            ("host=h password=ab&cd user=u", "host=h password=*** user=u"),
            (#"host=h password=a\ b user=u"#, "host=h password=*** user=u"),
            ("postgresql://u:pw@h/db?password=two", "postgresql://u:***@h/db?password=***"),
        ] {
            XCTAssertEqual(SecretMask.hidingPassword(in: conninfo), shown, conninfo)
        }
    }

    func testThePrintoutHasEveryKeyWithItsSource() throws {
        let e = try ConfigResolver.resolve(layers(env: ["STAFFCAST_RECENT_WINDOW": "100"], file: ["shutdown_grace": .number(1.5)],
                                                  flags: ["--max-connections", "9"]))
        let lines = e.printout()
        XCTAssertEqual(lines.count, ConfigKey.all.count)
        for (line, key) in zip(lines, ConfigKey.all) { XCTAssertTrue(line.hasPrefix("  \(key.name): "), line) }
        XCTAssertTrue(lines.contains { $0.contains("recent_window: 100") && $0.hasSuffix("(env STAFFCAST_RECENT_WINDOW)") })
        XCTAssertTrue(lines.contains { $0.contains("shutdown_grace: 1.5") && $0.hasSuffix("(file /etc/staffcast.yaml)") })
        XCTAssertTrue(lines.contains { $0.contains("max_connections: 9") && $0.hasSuffix("(flag --max-connections)") })
        XCTAssertTrue(lines.contains { $0.contains("listen: 0.0.0.0:8080") && $0.hasSuffix("(default)") })
    }

    func testEveryKeyHasANameAnEnvironmentVariableAFlagAndDocs() {
        var names = Set<String>(), flags = Set<String>(), envs = Set<String>()
        for key in ConfigKey.all {
            XCTAssertTrue(key.name.allSatisfy { $0.isLowercase || $0 == "_" }, key.name)
            XCTAssertEqual(key.environmentName, "STAFFCAST_" + key.name.uppercased())
            XCTAssertEqual(key.flagName, "--" + key.name.replacingOccurrences(of: "_", with: "-"))
            XCTAssertTrue(names.insert(key.name).inserted, "\(key.name) declared twice")
            for f in [key.flagName] + key.formerFlags { XCTAssertTrue(flags.insert(f).inserted, "flag \(f) twice") }
            for v in [key.environmentName] + key.formerEnvironmentNames { XCTAssertTrue(envs.insert(v).inserted, "env \(v) twice") }
            XCTAssertGreaterThan(key.summary.count, 10, "\(key.name) has no documentation")
            XCTAssertFalse(key.summary.contains("\n"), "\(key.name): one line")
            XCTAssertFalse(key.valueName.isEmpty)
            if let d = key.defaultValue {
                XCTAssertEqual(try? key.check(ConfigInput(d)).get(), d, "\(key.name)'s default does not pass its own check")
            } else {
                XCTAssertNotNil(key.unsetMeaning, "\(key.name) has no default and does not say what unset means")
            }
            XCTAssertEqual(ConfigKey.named(key.name), key)
        }
        // Names the command line uses for other things must not be settings.
        for taken in ["STAFFCAST_CONFIG", "STAFFCAST_SERVER", "STAFFCAST_TOKEN", "STAFFCAST_CA_FILE"] {
            XCTAssertFalse(envs.contains(taken), taken)
        }
    }

    func testTheDefaultsOfTheEngineAreTheDeclarations() {
        let engine = EngineConfiguration()
        XCTAssertEqual(engine.outboundMaxFrames, ConfigKey.outboundMaxFrames.defaultInteger)
        XCTAssertEqual(engine.outboundMaxBytes, 8 << 20)
        XCTAssertEqual(engine.sendBurst, 20)
        XCTAssertEqual(engine.heartbeatInterval, 20)
        XCTAssertEqual(EscalationPolicy().emergencyDefaultMinutes, 5)
        XCTAssertEqual(EscalationPolicy().maxRounds, 3)
    }

    /// The engines' counters are summed over every counter: one with each set to a distinct
    /// number, added to itself, doubles each (a counter missing from `counters` would not).
    func testEngineStatsSumEveryCounter() {
        var one = EngineStats()
        for (i, counter) in EngineStats.counters.enumerated() { one[keyPath: counter] = i + 1 }
        let sum = one + one
        for (i, counter) in EngineStats.counters.enumerated() { XCTAssertEqual(sum[keyPath: counter], 2 * (i + 1)) }
        XCTAssertEqual(Mirror(reflecting: one).children.count, EngineStats.counters.count, "a counter is not in EngineStats.counters")
    }

    /// docs/configuration.md is generated from the declarations; this fails when a key is
    /// added, changed or removed without regenerating it.
    func testTheReferenceDocIsTheDeclarations() throws {
        let path = Self.repository.appendingPathComponent("docs/configuration.md").path
        let committed = try String(contentsOfFile: path, encoding: .utf8)
        XCTAssertEqual(committed, ConfigReference.markdown(),
                       "docs/configuration.md is stale: run `swift run staffcast config reference > docs/configuration.md`")
        for key in ConfigKey.all { XCTAssertTrue(committed.contains("| `\(key.name)` |"), key.name) }
    }

    /// The commented example file has every key, with its environment name, and no other key.
    func testTheExampleFileDocumentsEveryKey() throws {
        let text = try String(contentsOfFile: Self.repository.appendingPathComponent("config/staffcast.example.yaml").path,
                              encoding: .utf8)
        var seen = Set<String>()
        for line in text.split(separator: "\n") {
            let body = line.hasPrefix("# ") ? line.dropFirst(2) : line[...]
            guard let colon = body.firstIndex(of: ":"), !body.hasPrefix(" ") else { continue }
            let name = String(body[..<colon])
            guard name.allSatisfy({ $0.isLowercase || $0 == "_" }), !name.isEmpty else { continue }
            if !line.hasPrefix("#") {
                guard let key = ConfigKey.named(name) else { XCTFail("the example sets unknown key \(name)"); continue }
                // "every key, with its default": a set value is the declared default.
                let raw = body[body.index(after: colon)...].split(separator: "#").first.map(String.init) ?? ""
                let value = raw.trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
                XCTAssertEqual(try? key.check(.text(value)).get(), key.defaultValue, "the example gives \(name) \(value)")
            }
            seen.insert(name)
        }
        for key in ConfigKey.all {
            XCTAssertTrue(seen.contains(key.name), "config/staffcast.example.yaml does not document \(key.name)")
            XCTAssertTrue(text.contains(key.environmentName), "config/staffcast.example.yaml does not name \(key.environmentName)")
        }
    }

    /// The operator's guide names keys in its tables (`| `key` | default | what |`): each must be a
    /// declared key, and a default it gives in plain digits must be the declared one.
    func testTheOperationsGuideNamesOnlyDeclaredKeysWithTheirDefaults() throws {
        let text = try String(contentsOfFile: Self.repository.appendingPathComponent("docs/operations.md").path, encoding: .utf8)
        var rows = 0
        for line in text.split(separator: "\n") where line.hasPrefix("| `") {
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count >= 3, cells[0].hasPrefix("`"), cells[0].hasSuffix("`") else { continue }
            let name = String(cells[0].dropFirst().dropLast())
            guard name.contains("_") || ConfigKey.named(name) != nil, name.allSatisfy({ $0.isLowercase || $0 == "_" }) else { continue }
            guard let key = ConfigKey.named(name) else {
                // Other tables (roles, metrics) name other things; a snake_case name here must be a key.
                if cells.count == 4 && (cells[1].contains("default") || Int(cells[1].filter(\.isNumber)) != nil) {
                    XCTFail("docs/operations.md documents '\(name)', which is not a configuration key")
                }
                continue
            }
            rows += 1
            let digits = cells[1].replacingOccurrences(of: ",", with: "").split(separator: " ").first.map(String.init) ?? ""
            if let documented = Int(digits), let declared = key.defaultValue {
                XCTAssertEqual(ConfigValue.number(Double(documented)).display, ConfigValue.number(Double(declared.display) ?? -1).display,
                               "docs/operations.md gives \(name) the default \(documented), the declaration \(declared.display)")
            }
        }
        XCTAssertGreaterThan(rows, 5, "the capacity table of docs/operations.md was not found")
    }

    static var repository: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }
}

extension ConfigInput {
    /// The input a value would come as from the file.
    init(_ value: ConfigValue) {
        switch value {
        case .text(let s): self = .text(s)
        case .integer(let i): self = .integer(i)
        case .number(let d): self = .number(d)
        case .flag(let b): self = .flag(b)
        }
    }
}
