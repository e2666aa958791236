import Foundation

/// How many WebSockets this server holds, in all and per user, and whether one more may
/// open. Pure; the server guards its one instance with a lock, since upgrades arrive on every
/// service loop. A slot is taken at the upgrade decision and given back when the socket ends.
public struct ConnectionCaps: Sendable, Equatable {
    public enum Refusal: Sendable, Equatable {
        /// The server holds `maxConnections` (HTTP 503).
        case serverFull(limit: Int)
        /// The user holds `maxPerUser` (HTTP 429).
        case userFull(limit: Int)
    }

    public let maxConnections: Int
    public let maxPerUser: Int
    public private(set) var total = 0
    private var perUser: [UUID: Int] = [:]

    public init(maxConnections: Int, maxPerUser: Int) {
        self.maxConnections = maxConnections
        self.maxPerUser = maxPerUser
    }

    public func count(of user: UUID) -> Int { perUser[user] ?? 0 }

    /// Takes a slot for `user`, or says why not.
    public mutating func take(for user: UUID) -> Refusal? {
        if total >= maxConnections { return .serverFull(limit: maxConnections) }
        let mine = perUser[user] ?? 0
        if mine >= maxPerUser { return .userFull(limit: maxPerUser) }
        total += 1
        perUser[user] = mine + 1
        return nil
    }

    /// Gives back a slot taken by `take`.
    public mutating func release(for user: UUID) {
        guard let mine = perUser[user], mine > 0 else { return }
        total -= 1
        perUser[user] = mine == 1 ? nil : mine - 1
    }
}
