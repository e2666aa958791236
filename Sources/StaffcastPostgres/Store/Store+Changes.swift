import Foundation
import StaffcastCore

/// The change feed every server follows (see `ChangeListener`), as the server's own login.
extension Store {
    /// Where the logs end now; a server starts following from here.
    public func currentCursors() throws -> ChangeCursors {
        let r = try conn.query("""
            SELECT (SELECT coalesce(max(seq), 0) FROM staff_messages),
                   (SELECT coalesce(max(seq), 0) FROM notifications),
                   (SELECT coalesce(max(seq), 0) FROM access_changes)
            """)
        return ChangeCursors(message: r.int64(0, 0) ?? 0, notification: r.int64(0, 1) ?? 0, access: r.int64(0, 2) ?? 0)
    }

    /// Everything committed after `cursors`, read from one snapshot, at most `limit` rows a log.
    public func changes(after cursors: ChangeCursors, limit: Int = 1_000) throws -> ChangeBatch {
        try conn.transaction("REPEATABLE READ READ ONLY") { tx in
            var batch = ChangeBatch(cursors: cursors)
            let a = try tx.query("""
                SELECT seq, event_id, user_id, access_level FROM access_changes WHERE seq > $1 ORDER BY seq LIMIT $2
                """, [String(cursors.access), String(limit)])
            for i in 0..<a.rowCount {
                guard let seq = a.int64(i, 0), let event = a.uuid(i, 1), let user = a.uuid(i, 2) else { continue }
                batch.access.append(AccessChange(seq: seq, eventID: event, userID: user,
                                                 level: a.string(i, 3).flatMap(AccessLevel.init)))
                batch.cursors.access = seq
            }
            // Read the message log by seq, expired or not, so the cursor passes every row;
            // only unexpired ones are handed on.
            let m = try tx.query("""
                SELECT \(Self.messageColumns(reader: "NULL")), \(Self.unexpired)
                FROM staff_messages m JOIN profiles p ON p.id = m.sender_id
                WHERE m.seq > $1 ORDER BY m.seq LIMIT $2
                """, [String(cursors.message), String(limit)])
            let messages = try Self.messages(m)
            for (i, message) in messages.enumerated() {
                if m.bool(i, 12) == true { batch.messages.append(message) }
                batch.cursors.message = message.seq
            }
            let n = try tx.query("""
                SELECT \(Self.notificationColumns) FROM notifications n WHERE n.seq > $1 ORDER BY n.seq LIMIT $2
                """, [String(cursors.notification), String(limit)])
            batch.notifications = try Self.notifications(n)
            if n.rowCount > 0, let last = n.int64(n.rowCount - 1, 9) { batch.cursors.notification = last }
            batch.hasMore = a.rowCount == limit || m.rowCount == limit || n.rowCount == limit
            return batch
        }
    }
}
