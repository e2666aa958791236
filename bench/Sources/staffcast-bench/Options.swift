import Foundation

/// Settings. Each has a flag `--name value` and an environment variable NAME (dashes become
/// underscores, upper case); the flag wins. `staffcast-bench --help` lists them.
struct Options {
    var host = "127.0.0.1"
    var port = 8080
    /// `--server https://…`: every connection over TLS (wss and https; `Wire`).
    var tls = false
    var serverPID: Int32 = 0
    /// Every process of the server (nginx: master and workers): CPU and memory are their sum.
    /// `--server-pid` takes a list; the first is `serverPID`.
    var serverPIDs: [Int32] = []
    /// Which server this is (Target.swift): staffcast (default), nchan or nats.
    var target = Target.staffcast
    /// NATS: the TCP client port the publisher uses (the subscribers use --server's port).
    var publisherPort = 0
    /// Writes the figures of the comparison rows here (bench/peers.sh; `--compare-results`).
    var resultsFile = ""
    /// `--compare-results "staffcast=FILE nats=FILE nchan=FILE"`: print the side-by-side table
    /// of those results files and exit (no server needed).
    var compareResults: [(Target, String)] = []
    /// three-servers: the ports of the servers the subscribers spread over (the publisher uses
    /// --server's); empty = that scenario is not run.
    var subscriberPorts: [Int] = []
    var postgresPID: Int32 = 0
    var subscriberToken = ""
    var publisherToken = ""
    var opsToken = ""
    var event = ""

    /// The default order: storm first on a fresh server (its connections also give the memory
    /// figure), then the fan-out cases of issue 7, then the durable path of issue 8: the read storm
    /// before the send-rate runs (those add hundreds of thousands of messages to the event, which
    /// would all be unread for the read storm's fresh users), the 64-client send rate last.
    static let fanoutScenarios = ["storm", "memory", "latency10k", "latency1k", "storm-live", "flatout-ws", "flatout-http"]
    static let durableScenarios = ["readstorm", "answerstorm", "catchup", "sendrate-ws", "sendrate1", "sendrate-pipelined",
                                   "sendrate-paced", "sendrate"]
    static let allScenarios = fanoutScenarios + durableScenarios
    /// The rows of the side-by-side table with nchan and NATS (bench/peers.sh), in the order
    /// that reuses connections: the storm's 10,000 serve memory and latency10k, latency1k's
    /// 1,000 serve flatout-bounded.
    static let compareScenarios = ["storm", "memory", "latency10k", "latency1k", "flatout-bounded"]
    /// Named only (never in `all`): the comparison's flat-out row, and three-servers.
    static let namedScenarios = ["flatout-bounded", "three-servers"]
    var scenarios = Options.allScenarios
    /// Legacy `SUBSCRIBERS="1000 10000" RATE=10`: one paced run per count (scenario `custom`).
    var customSubscribers: [Int] = []
    var customRate = 10.0

    var readers = 2
    var duration = 10.0
    var latency1kSubscribers = 1_000
    var latency1kRate = 50.0
    var latency10kSubscribers = 10_000
    var latency10kRate = 10.0
    var stormConnections = 10_000
    var stormWindow = 2_000
    /// staffcast subscribers subscribe in the upgrade's URL (`/v1/ws?subscribe=…`: the 101,
    /// `hello` and `subscribed` in one answer), as the staff app and `watch` do; false: with a
    /// `subscribe` frame after the 101 (a round trip more; SUBSCRIBE_IN_URL=no).
    var subscribeInURL = true
    var memoryConnections = 10_000
    var flatoutSubscribers = 1_000
    var flatoutDuration = 5.0
    var wsWindow = 64
    var httpConnections = 4
    var httpPipeline = 16
    var connectTimeout = 60.0
    var settle = 2.0
    var paceWindow = 1_000
    /// One read storm per count ("1000 3000": two rows).
    var readstormN = [1_000]
    /// One token per line, each of a distinct staff user of the event (scripts/bench.sh creates them).
    var readstormTokensFile = ""
    var readstormTokens: [String] = []
    /// The event of the read storm's users (its own, so their roster does not weigh on the other
    /// scenarios' event); the publisher must be its owner or admin. Default: --event.
    var readstormEvent = ""
    var readstormTimeout = 60.0
    var sendrateConnections = 64
    var sendratePacedRate = 1_000.0
    var catchupMessages = 50_000
    /// `soak` (bench/soak.sh; never part of `all`): this many subscribers for this long,
    /// the publisher at this rate, server VmRSS every minute.
    var soakConnections = 10_000
    var soakMinutes = 30
    var soakRate = 2.0
    /// `storm-live`: this many subscribers at this rate, quiet and then while this many other
    /// clients reconnect (connect, upgrade, subscribe, reset) over and over.
    var stormLiveSubscribers = 200
    var stormLiveRate = 10.0
    var stormLiveConnections = 3_000
    /// flatout-bounded: sends in flight, and how far the publisher may run ahead of the slowest
    /// subscriber (messages), as in issue 21's table.
    var boundedWindow = 16
    var boundedAhead = 1_000
    /// three-servers: subscribers spread over the servers, and the paced publisher's rate.
    var threeSubscribers = 3_000
    var threeRate = 50.0

    static let help = """
        staffcast-bench: the fan-out benchmark (bench/README.md). Usually run by `make bench`
        (scripts/bench.sh starts a server and passes the connection settings).

        Connection (set by scripts/bench.sh, bench/peers.sh, bench/three-servers.sh):
          --server URL              http://127.0.0.1:8080; https://… runs every scenario over
                                    TLS (wss and https; staffcast only; the certificate is not
                                    verified)
          --server-kind K           staffcast (default), nchan or nats (bench/README.md: Peers)
          --server-pid PID[,PID…]   the server's processes, for memory and CPU from /proc (a list:
                                    their sum; memory is then the sum of their Pss)
          --publisher-port N        nats: the TCP client port the publisher uses
          --subscriber-ports P,P,P  three-servers: the servers the subscribers spread over
          --results-file FILE       write the comparison rows' figures to FILE
          --compare-results "staffcast=F nats=F nchan=F"
                                    print the side-by-side table of those files and exit
          --postgres-pid PID        the postmaster, for PostgreSQL's CPU (optional)
          --event ID --subscriber-token T --publisher-token T --ops-token T
          --readstorm-tokens FILE   tokens of distinct staff users, one a line (readstorm)
          --readstorm-event ID      their event, owned by the publisher [--event]

        Scenarios (flag or environment variable; defaults in brackets):
          SCENARIOS             storm memory latency10k latency1k flatout-ws flatout-http
                                readstorm answerstorm catchup sendrate-ws sendrate1 sendrate-pipelined
                                sendrate-paced sendrate
                                ("flatout" = both flat-out runs, "fanout" = the first six (issue 7),
                                "durable" = the last eight (issue 8), "all" = every one = the default,
                                "custom" = legacy; "compare" = the rows of the side-by-side
                                table with the peers: storm memory latency10k latency1k
                                flatout-bounded; named only: flatout-bounded, three-servers)
          DURATION              seconds of paced publishing in the latency scenarios, and of
                                sending in the sendrate scenarios [10]
          LATENCY1K_SUBSCRIBERS [1000]   LATENCY1K_RATE [50]
          LATENCY10K_SUBSCRIBERS [10000] LATENCY10K_RATE [10]
          STORM_CONNECTIONS     [10000]  STORM_WINDOW handshakes in flight at once [2000]
          SUBSCRIBE_IN_URL      yes: staffcast subscribers subscribe in the upgrade's URL
                                (/v1/ws?subscribe=EVENT&since_seq=N, one round trip, as the staff
                                app does); no: a subscribe frame after the 101 [yes]
          MEMORY_CONNECTIONS    [10000]
          FLATOUT_SUBSCRIBERS   [1000]   FLATOUT_DURATION seconds [5]
          WS_WINDOW             sends in flight on the WebSocket publisher [64]
          HTTP_CONNECTIONS      keep-alive connections of the HTTP publisher [4]
          HTTP_PIPELINE         requests in flight per HTTP connection [16]
          READSTORM_N           readstorm: staff users (distinct, one connection each) who
                                mark one emergency message read at once; a list ("1000 3000")
                                runs one storm per count [1000]
          READSTORM_TIMEOUT     readstorm: seconds to wait for the replies and receipts [60]
          SENDRATE_CONNECTIONS  sendrate: keep-alive HTTP connections, one POST at a time each [64]
          SENDRATE_PACED_RATE   sendrate-paced: POSTs per second, spread over SENDRATE_CONNECTIONS [1000]
          CATCHUP_MESSAGES      catchup: messages published while the client was away [50000]
          SOAK_CONNECTIONS      soak (only when named; bench/soak.sh): subscribers held open [10000]
          SOAK_MINUTES          soak: minutes; server VmRSS is read after each [30]
          SOAK_RATE             soak: messages per second from the publisher [2]
          STORM_LIVE_SUBSCRIBERS   storm-live: subscribers whose latency is measured [200]
          STORM_LIVE_RATE          storm-live: messages per second to them [10]
          STORM_LIVE_CONNECTIONS   storm-live: clients reconnecting meanwhile, over and over [3000]
          BOUNDED_WINDOW        flatout-bounded: sends in flight [16]
          BOUNDED_AHEAD         flatout-bounded: messages the publisher may be ahead of the
                                slowest subscriber [1000]
          THREE_SUBSCRIBERS     three-servers: subscribers spread over the servers [3000]
          THREE_RATE            three-servers: messages per second, for DURATION s [50]
          READERS               subscriber threads (epoll loops) [2]
          CONNECT_TIMEOUT       seconds to wait for a set of subscribers [60]
          SETTLE                seconds idle before reading VmRSS after connecting [2]
          SUBSCRIBERS, RATE     legacy: paced runs with these subscriber counts ("custom")
        """

    static func parse() throws -> Options {
        var flags: [String: String] = [:]
        var args = CommandLine.arguments.dropFirst().makeIterator()
        while let a = args.next() {
            if a == "--help" || a == "-h" { print(help); exit(0) }
            guard a.hasPrefix("--") else { throw BenchFailure("unexpected argument \(a) (see --help)") }
            guard let v = args.next() else { throw BenchFailure("\(a) needs a value") }
            flags[String(a.dropFirst(2))] = v
        }
        let env = ProcessInfo.processInfo.environment
        var used: Set<String> = []
        func value(_ name: String) -> String? {
            used.insert(name)
            if let v = flags[name] { return v }
            let e = env[name.uppercased().replacingOccurrences(of: "-", with: "_")]
            return (e?.isEmpty ?? true) ? nil : e
        }
        func int(_ name: String, _ into: inout Int) throws {
            guard let v = value(name) else { return }
            guard let i = Int(v.replacingOccurrences(of: "_", with: "")), i > 0 else { throw BenchFailure("\(name) must be a positive whole number, not \(v)") }
            into = i
        }
        func double(_ name: String, _ into: inout Double) throws {
            guard let v = value(name) else { return }
            guard let d = Double(v), d > 0 else { throw BenchFailure("\(name) must be a positive number, not \(v)") }
            into = d
        }

        var o = Options()
        if let server = value("server") {
            guard let c = URLComponents(string: server), let host = c.host else { throw BenchFailure("bad --server \(server)") }
            o.host = host == "localhost" ? "127.0.0.1" : host
            o.tls = c.scheme == "https"
            guard o.tls || c.scheme == "http" else { throw BenchFailure("--server takes http:// or https://, not \(server)") }
            o.port = c.port ?? (o.tls ? 443 : 80)
        }
        if let v = value("server-pid") {
            o.serverPIDs = v.split(whereSeparator: { $0 == "," || $0 == " " }).compactMap { Int32($0) }.filter { $0 > 0 }
            o.serverPID = o.serverPIDs.first ?? 0
        }
        if let v = value("server-kind") {
            guard let t = Target(rawValue: v) else { throw BenchFailure("--server-kind must be staffcast, nchan or nats, not \(v)") }
            o.target = t
        }
        try int("publisher-port", &o.publisherPort)
        o.resultsFile = value("results-file") ?? ""
        if let v = value("subscriber-ports") {
            let ports = v.split(whereSeparator: { $0 == "," || $0 == " " }).map { Int($0) }
            guard !ports.isEmpty, ports.allSatisfy({ ($0 ?? 0) > 0 }) else { throw BenchFailure("--subscriber-ports must be port numbers, not \(v)") }
            o.subscriberPorts = ports.map { $0! }
        }
        if let v = value("compare-results") {
            for pair in v.split(separator: " ") {
                let kv = pair.split(separator: "=", maxSplits: 1).map(String.init)
                guard kv.count == 2, let t = Target(rawValue: kv[0]) else {
                    throw BenchFailure("--compare-results wants \"staffcast=FILE nats=FILE nchan=FILE\", not \(pair)")
                }
                o.compareResults.append((t, kv[1]))
            }
            return o
        }
        if let v = value("postgres-pid") { o.postgresPID = Int32(v) ?? 0 }
        o.subscriberToken = value("subscriber-token") ?? ""
        o.publisherToken = value("publisher-token") ?? ""
        o.opsToken = value("ops-token") ?? ""
        o.event = value("event") ?? ""
        guard o.target != .staffcast || (!o.event.isEmpty && !o.subscriberToken.isEmpty && !o.publisherToken.isEmpty) else {
            throw BenchFailure("--event, --subscriber-token and --publisher-token are required (scripts/bench.sh sets them)")
        }
        try int("readers", &o.readers)
        try double("duration", &o.duration)
        try int("latency1k-subscribers", &o.latency1kSubscribers)
        try double("latency1k-rate", &o.latency1kRate)
        try int("latency10k-subscribers", &o.latency10kSubscribers)
        try double("latency10k-rate", &o.latency10kRate)
        try int("storm-connections", &o.stormConnections)
        try int("storm-window", &o.stormWindow)
        if let v = value("subscribe-in-url") {
            guard v == "yes" || v == "no" else { throw BenchFailure("SUBSCRIBE_IN_URL must be yes or no, not \(v)") }
            o.subscribeInURL = v == "yes"
        }
        try int("memory-connections", &o.memoryConnections)
        try int("flatout-subscribers", &o.flatoutSubscribers)
        try double("flatout-duration", &o.flatoutDuration)
        try int("ws-window", &o.wsWindow)
        try int("http-connections", &o.httpConnections)
        try int("http-pipeline", &o.httpPipeline)
        try double("connect-timeout", &o.connectTimeout)
        try double("settle", &o.settle)
        try int("pace-window", &o.paceWindow)
        if let v = value("readstorm-n") {
            let counts = v.split(whereSeparator: { $0 == " " || $0 == "," }).map { Int($0.replacingOccurrences(of: "_", with: "")) }
            guard !counts.isEmpty, counts.allSatisfy({ ($0 ?? 0) > 0 }) else { throw BenchFailure("READSTORM_N must be positive whole numbers, not \(v)") }
            o.readstormN = counts.map { $0! }
        }
        try double("readstorm-timeout", &o.readstormTimeout)
        try int("sendrate-connections", &o.sendrateConnections)
        try double("sendrate-paced-rate", &o.sendratePacedRate)
        try int("catchup-messages", &o.catchupMessages)
        try int("soak-connections", &o.soakConnections)
        try int("soak-minutes", &o.soakMinutes)
        try double("soak-rate", &o.soakRate)
        try int("storm-live-subscribers", &o.stormLiveSubscribers)
        try double("storm-live-rate", &o.stormLiveRate)
        try int("storm-live-connections", &o.stormLiveConnections)
        try int("bounded-window", &o.boundedWindow)
        try int("bounded-ahead", &o.boundedAhead)
        try int("three-subscribers", &o.threeSubscribers)
        try double("three-rate", &o.threeRate)
        o.readstormEvent = value("readstorm-event") ?? ""
        if let file = value("readstorm-tokens") {
            o.readstormTokensFile = file
            guard let text = try? String(contentsOfFile: file, encoding: .utf8) else { throw BenchFailure("cannot read --readstorm-tokens \(file)") }
            o.readstormTokens = text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        }
        try double("rate", &o.customRate)
        if let subs = value("subscribers") {
            o.customSubscribers = subs.split(whereSeparator: { $0 == " " || $0 == "," }).compactMap { Int($0) }
        }
        if let s = value("scenarios") {
            var list: [String] = []
            for name in s.split(whereSeparator: { $0 == " " || $0 == "," }).map(String.init) {
                switch name {
                case "all": list += allScenarios
                case "flatout": list += ["flatout-ws", "flatout-http"]
                case "fanout": list += fanoutScenarios
                case "durable": list += durableScenarios
                case "compare": list += compareScenarios
                case _ where allScenarios.contains(name) || namedScenarios.contains(name) || name == "custom" || name == "soak": list.append(name)
                default: throw BenchFailure("unknown scenario \(name); known: \(allScenarios.joined(separator: " ")) \(namedScenarios.joined(separator: " ")) flatout fanout durable compare all custom")
                }
            }
            o.scenarios = list
        } else if !o.customSubscribers.isEmpty {
            o.scenarios = ["custom"]
        }
        for name in flags.keys where !used.contains(name) { throw BenchFailure("unknown option --\(name) (see --help)") }
        if o.target != .staffcast {
            let durableOnly = o.scenarios.filter { !Options.compareScenarios.contains($0) }
            guard durableOnly.isEmpty else {
                throw BenchFailure("\(o.target.title) runs only the comparison's scenarios (\(Options.compareScenarios.joined(separator: " "))), not \(durableOnly.joined(separator: " "))")
            }
            if o.target == .nats && o.publisherPort == 0 { throw BenchFailure("--server-kind nats needs --publisher-port (the TCP client port)") }
            if o.tls { throw BenchFailure("--server https:// is for staffcast only; \(o.target.title) runs over plain TCP here") }
        }
        return o
    }
}
