// staffcast-bench: the fan-out benchmark of issue 7. Subscribers on raw sockets + epoll (one or
// two threads), one publisher (WebSocket `send` ops or pipelined HTTP POSTs); scenarios for
// latency at 1,000 and 10,000 subscribers, a 10,000-connection reconnect storm, flat-out
// deliveries, idle memory per connection and server CPU per delivery; one table at the end.
// Run by `make bench` (scripts/bench.sh, bench/README.md); never part of `make test`.
import Foundation
import Glibc

signal(SIGPIPE, SIG_IGN)
var limit = rlimit()
getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
limit.rlim_cur = limit.rlim_max
setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)

do {
    let options = try Options.parse()
    if !options.compareResults.isEmpty {
        try Comparison(options.compareResults).print()
        exit(0)
    }
    let needed = max(options.stormConnections, options.memoryConnections, options.latency10kSubscribers,
                     options.latency1kSubscribers, options.flatoutSubscribers, options.readstormN.max() ?? 0, options.customSubscribers.max() ?? 0)
    if Int(limit.rlim_cur) < needed + 100 {
        print("warning: only \(limit.rlim_cur) file descriptors (ulimit -n); \(needed) connections need more (scripts/bench.sh raises it)")
    }
    if options.tls { try Wire.enableTLS() }
    Bench(options).run()
} catch {
    FileHandle.standardError.write(Data("staffcast-bench: \(error)\n".utf8))
    exit(2)
}
