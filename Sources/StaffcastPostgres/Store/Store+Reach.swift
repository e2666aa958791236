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
        /// The event's zones and who has checked into each.
        public var zones: [(name: String, members: [UUID])] = []
    }

    /// For an admin or owner of `event` only (checked as that user, under row-level security).
    /// With `teams`, the roster is who a message to those teams would reach: their members and
    /// the event's admins and owners (an unknown team is not_found).
    public func reachFacts(as user: UUID, event: UUID, excludingNode node: String, teams: [String] = []) throws -> ReachFacts {
        var facts = try withAdminAccess(user, event, refusal: "Only admins and owners of the event may see its reach.") { tx in
            let teams = try requireTeams(teams, event: event, in: tx)
            let r = try tx.query("""
                SELECT a.user_id, p.display_name, \(Self.epochMicros("s.seen_at"))
                FROM event_access a JOIN profiles p ON p.id = a.user_id
                LEFT JOIN presence_seen s ON s.event_id = a.event_id AND s.user_id = a.user_id
                WHERE a.event_id = $1
                  AND (cardinality($2::text[]) = 0 OR a.access_level IN ('admin','owner')
                       OR EXISTS (SELECT 1 FROM team_members tm
                                  WHERE tm.event_id = a.event_id AND tm.user_id = a.user_id AND tm.team_name = ANY ($2::text[])))
                ORDER BY p.display_name, a.user_id
                """, [Self.id(event), Self.textArray(teams)])
            var roster: [(userID: UUID, displayName: String)] = []
            var seen: [UUID: Date] = [:]
            for i in 0..<r.rowCount {
                guard let id = r.uuid(i, 0) else { continue }
                roster.append((id, r.string(i, 1) ?? ""))
                if let d = r.date(i, 2) { seen[id] = d }
            }
            let z = try tx.query("""
                SELECT t.name, ARRAY(SELECT m.user_id FROM team_members m WHERE m.event_id = t.event_id AND m.team_name = t.name)::text
                FROM teams t WHERE t.event_id = $1 AND t.kind = 'zone' ORDER BY t.name
                """, [Self.id(event)])
            let zones = (0..<z.rowCount).map { i in (name: z.string(i, 0) ?? "", members: Self.uuidArray(z.string(i, 1))) }
            return ReachFacts(roster: roster, connectedElsewhere: [], lastSeen: seen, zones: zones)
        }
        // The presence table is the servers' own (no user reads it): as the server's login.
        facts.connectedElsewhere = Set(try presence(event: event, excludingNode: node).map(\.userID))
        return facts
    }
}
