import Foundation

/// `GET /v1/events/{id}/status?limit=N&offset=M` (docs/protocol.md): the counts for the whole
/// roster, and only N people in the console's order (not connected first, then by name). At
/// 10,000 staff the whole roster was 2 MB and seconds of database work per poll, and the console
/// shows 300 people. Without `limit` the answer is the whole roster by name, as it always was:
/// `from(query:)` is nil then. Pure.
public struct RosterPage: Sendable, Equatable {
    /// At most this many people in one answer (the largest roster served in one piece).
    public static let maxLimit = 10_000

    public var limit: Int
    /// People skipped at the front, in the same order (paging on).
    public var offset: Int

    public init(limit: Int, offset: Int = 0) {
        self.limit = limit
        self.offset = offset
    }

    /// What the event status route takes; anything else is refused by name.
    public static let parameters = KnownFields(["limit", "offset", "access_token"], noun: "parameter")

    /// The page a query asks for; nil without `limit` (the whole roster).
    public static func from(query: [String: String]) throws(StaffcastError) -> RosterPage? {
        try parameters.check(Array(query.keys), in: "The query")
        let limit = try QueryNumber.read(query, "limit", 1...Int64(maxLimit))
        let offset = try QueryNumber.read(query, "offset", 0...Int64(Int32.max))
        guard let limit else {
            if offset != nil { throw .invalid("offset pages through a limited answer: give limit too (for example ?limit=300&offset=300).") }
            return nil
        }
        return RosterPage(limit: Int(limit), offset: Int(offset ?? 0))
    }

    /// One person of the roster as far as ordering goes.
    public struct Person: Sendable, Equatable {
        public var userID: UUID
        public var displayName: String
        public var connected: Bool

        public init(userID: UUID, displayName: String, connected: Bool) {
            (self.userID, self.displayName, self.connected) = (userID, displayName, connected)
        }
    }

    /// The people of one page and the counts of the whole roster.
    public struct Selection: Sendable, Equatable {
        /// This page, in the console's order.
        public var people: [Person]
        public var roster: Int
        public var connected: Int
        public var notConnected: Int { roster - connected }
        /// People after this page (those before it are `offset`).
        public var leftOut: Int
    }

    /// The console's order: not connected first (whom an organiser looks for), then by name
    /// ignoring case, then by id, so that no two people tie and pages never overlap.
    public static func inConsoleOrder(_ people: [Person]) -> [Person] {
        // The keys once per person, not once per comparison: 10,000 people.
        people.map { (key: ($0.connected ? 1 : 0, $0.displayName.lowercased(), $0.displayName, $0.userID.uuidString), person: $0) }
            .sorted { $0.key < $1.key }
            .map(\.person)
    }

    public func select(_ everyone: [Person]) -> Selection {
        let ordered = Self.inConsoleOrder(everyone)
        let page = Array(ordered.dropFirst(offset).prefix(limit))
        return Selection(people: page, roster: everyone.count, connected: everyone.filter(\.connected).count,
                         leftOut: max(0, everyone.count - offset - page.count))
    }
}
