import Foundation
import Logging
import StaffcastCore
import StaffcastPostgres

/// Checks bearer tokens at the WebSocket upgrade, which libwebsockets asks for synchronously.
///
/// Owned by the service thread. A token seen in the last `ttl` seconds is answered from memory;
/// otherwise one indexed lookup runs on this thread's own connection, with a short statement
/// timeout, so a slow database delays a handshake by at most that long and never the fan-out
/// of messages already in memory. The cache is bounded (`capacity`): when full it is emptied.
final class Authenticator {
    enum Outcome {
        case accepted(Identity)
        case rejected
        case unavailable
    }

    private let conninfo: String
    private let logger: Logger
    private var connection: PGConnection?
    private var cache: [String: (identity: Identity, until: Date)] = [:]
    /// Well-formed tokens that were not found, remembered briefly so that a client retrying a
    /// wrong token in a loop costs one query per `negativeTTL`, not one per attempt.
    private var refused: [String: Date] = [:]
    let ttl: TimeInterval = 60
    let negativeTTL: TimeInterval = 5
    let capacity = 100_000

    init(conninfo: String, logger: Logger) {
        self.conninfo = conninfo
        self.logger = logger
    }

    func check(_ token: String?) -> Outcome {
        guard let token, TokenHasher.looksValid(token) else { return .rejected }
        let now = Date()
        if let hit = cache[token], hit.until > now { return .accepted(hit.identity) }
        if let until = refused[token], until > now { return .rejected }
        do {
            let store = try store()
            guard let identity = try store.authenticate(token: token) else {
                if refused.count >= 10_000 { refused.removeAll(keepingCapacity: true) }
                refused[token] = now.addingTimeInterval(negativeTTL)
                return .rejected
            }
            if cache.count >= capacity { cache.removeAll(keepingCapacity: true) }
            cache[token] = (identity, now.addingTimeInterval(ttl))
            return .accepted(identity)
        } catch {
            logger.warning("token check failed: database unavailable", metadata: ["error": "\(error)"])
            if let c = connection, !c.isHealthy { connection = nil }
            return .unavailable
        }
    }

    private func store() throws -> Store {
        if let connection, connection.isHealthy { return Store(connection) }
        let c = try PGConnection(conninfo: conninfo)
        try c.execute("SET statement_timeout = '2s'")
        connection = c
        return Store(c)
    }

    func close() { connection = nil }
}
