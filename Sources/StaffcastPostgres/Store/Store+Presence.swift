import Foundation
import StaffcastCore

/// Presence: which users are subscribed to which event on which server.
extension Store {
    public struct PresenceRow: Sendable, Equatable {
        public var node: String
        public var connectionID: Int64
        public var userID: UUID
        public var eventID: UUID
        public var connectedSince: Date
        public var rttMs: Double?

        public init(node: String, connectionID: Int64, userID: UUID, eventID: UUID, connectedSince: Date, rttMs: Double?) {
            self.node = node
            self.connectionID = connectionID
            self.userID = userID
            self.eventID = eventID
            self.connectedSince = connectedSince
            self.rttMs = rttMs
        }
    }

    /// Replaces every row of `node` with `rows`, in one transaction (arrays, one statement).
    public func replacePresence(node: String, rows: [PresenceRow]) throws {
        func array(_ values: [String]) -> String { "{" + values.joined(separator: ",") + "}" }
        try conn.transaction { tx in
            try tx.query("DELETE FROM presence WHERE node = $1", [node])
            guard !rows.isEmpty else { return }
            try tx.query("""
                INSERT INTO presence (node, connection_id, user_id, event_id, connected_since, rtt_ms)
                SELECT $1, c, u, e, to_timestamp(s / 1000000.0), r
                FROM unnest($2::int8[], $3::uuid[], $4::uuid[], $5::int8[], $6::float8[]) AS t(c, u, e, s, r)
                """, [node,
                      array(rows.map { String($0.connectionID) }),
                      array(rows.map { Self.id($0.userID) }),
                      array(rows.map { Self.id($0.eventID) }),
                      array(rows.map { String(Int64($0.connectedSince.timeIntervalSince1970 * 1_000_000)) }),
                      array(rows.map { $0.rttMs.map { String($0) } ?? "NULL" })])
            // Last seen (reach): each user and event at most about every 20 s.
            try tx.query("""
                INSERT INTO presence_seen (user_id, event_id, seen_at)
                SELECT DISTINCT user_id, event_id, now() FROM presence WHERE node = $1
                ON CONFLICT (event_id, user_id) DO UPDATE SET seen_at = excluded.seen_at
                WHERE presence_seen.seen_at < now() - interval '20 seconds'
                """, [node])
        }
    }

    /// How old a presence row may be and still count: every server rewrites its rows every 3 s
    /// (the ticker), so a server that was killed drops out after about this long. It was 30 s:
    /// for half a minute after a crash its people counted as "delivered live" and got no push
    /// (attack round). Three missed refreshes, for a server whose workers are busy.
    public static let presenceFreshSeconds = 10

    /// Fresh presence rows of `event` from servers other than `excludingNode`.
    public func presence(event: UUID, excludingNode node: String, freshWithin seconds: Int = Store.presenceFreshSeconds) throws -> [PresenceRow] {
        let r = try conn.query("""
            SELECT node, connection_id, user_id, event_id, \(Self.epochMicros("connected_since")), rtt_ms
            FROM presence WHERE event_id = $1 AND node <> $2 AND seen_at > now() - make_interval(secs => $3::int)
            """, [Self.id(event), node, String(seconds)])
        return (0..<r.rowCount).compactMap { i in
            guard let user = r.uuid(i, 2), let e = r.uuid(i, 3), let since = r.date(i, 4) else { return nil }
            return PresenceRow(node: r.string(i, 0) ?? "", connectionID: r.int64(i, 1) ?? 0, userID: user, eventID: e,
                               connectedSince: since, rttMs: r.string(i, 5).flatMap(Double.init))
        }
    }
}
