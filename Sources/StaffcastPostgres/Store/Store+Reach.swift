import Foundation
import StaffcastCore

/// What `GET /v1/events/{id}/reach` needs from the database: the roster, who is connected to
/// the event on other servers (the presence table), and when each was last seen.
extension Store {
    public struct ReachFacts: Sendable {
        public var roster: [(userID: UUID, displayName: String)]
        /// Users with a fresh presence row on another server.
        public var connectedElsewhere: Set<UUID>
        public var lastSeen: [UUID: Date]
    }

    /// For an admin or owner of `event` only (checked as that user, under row-level security).
    public func reachFacts(as user: UUID, event: UUID, excludingNode node: String) throws -> ReachFacts {
        var facts = try withAccess(user, event) { tx, summary in
            guard summary.accessLevel.maySeeReceipts else {
                throw StaffcastError.forbidden("Only admins and owners of the event may see its reach.")
            }
            let r = try tx.query("""
                SELECT a.user_id, p.display_name, \(Self.epochMicros("s.seen_at"))
                FROM event_access a JOIN profiles p ON p.id = a.user_id
                LEFT JOIN presence_seen s ON s.event_id = a.event_id AND s.user_id = a.user_id
                WHERE a.event_id = $1 ORDER BY p.display_name, a.user_id
                """, [Self.id(event)])
            var roster: [(userID: UUID, displayName: String)] = []
            var seen: [UUID: Date] = [:]
            for i in 0..<r.rowCount {
                guard let id = r.uuid(i, 0) else { continue }
                roster.append((id, r.string(i, 1) ?? ""))
                if let d = r.date(i, 2) { seen[id] = d }
            }
            return ReachFacts(roster: roster, connectedElsewhere: [], lastSeen: seen)
        }
        // The presence table is the servers' own (no user reads it): as the server's login.
        facts.connectedElsewhere = Set(try presence(event: event, excludingNode: node).map(\.userID))
        return facts
    }
}
