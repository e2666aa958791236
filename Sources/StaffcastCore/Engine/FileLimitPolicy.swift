import Foundation

/// How many file descriptors `serve` asks for (its soft `RLIMIT_NOFILE`).
///
/// Each WebSocket is a descriptor (three over TLS: the TCP socket and the relay's socket pair),
/// so the limit is raised to what `max_connections` needs plus room for everything else
/// (database connections, delivery threads, listening sockets, HTTP clients) — up to the hard
/// limit, but not to the hard limit itself: libwebsockets sizes each loop's descriptor table by
/// the limit, and Debian's build (with `_DEBUG` sanity checks) walks the whole table on every
/// adopted socket and every close. A hard limit of a million made that 8 MiB per loop, walked
/// twice per connection (docs/performance.md, "Where the time goes"). Never lowers the limit.
public enum FileLimitPolicy {
    /// Descriptors for everything that is not a WebSocket.
    public static let headroom: UInt64 = 16_384

    public static func target(current: UInt64, hard: UInt64, maxConnections: Int, tls: Bool) -> UInt64 {
        let connections = UInt64(min(max(0, maxConnections), 1 << 40)) // no overflow below
        let wanted = connections * (tls ? 3 : 1) + headroom
        return max(current, min(hard, wanted))
    }
}
