import Foundation
import StaffcastCore

/// Group commit of notifications: many, one transaction, one pipeline, one WAL flush.
extension Store {
    public struct PendingNotification: Sendable {
        public var sender: UUID
        public var request: NotificationRequest
        /// Chosen by the server, so each stored row is matched back to its request.
        public var id: UUID
        public var createdAt: Date
        public init(sender: UUID, request: NotificationRequest, id: UUID = UUID(), createdAt: Date = Date()) {
            self.sender = sender
            self.request = request
            self.id = id
            self.createdAt = createdAt
        }
    }

    /// Stores every notification its sender may send, in one transaction, and returns the
    /// stored notification for each (nil for one the sender may not send: nothing of it was
    /// stored; `createNotification(as:)` alone gives its precise error).
    ///
    /// Each sender's rows are one INSERT run as that sender under row-level security; the
    /// policy's own predicate (`staffcast_may_notify`) filters the rows first, so a refused
    /// row is left out instead of failing the batch. The whole transaction is one libpq
    /// pipeline: one round trip.
    public func createNotificationBatch(_ pending: [PendingNotification]) throws -> [StaffNotification?] {
        guard !pending.isEmpty else { return [] }
        let bySender = Dictionary(grouping: pending.indices, by: { pending[$0].sender })
        var statements: [(sql: String, params: [String?])] = [("SET LOCAL ROLE staffcast_app", [])]
        var inserts: [Int] = []
        for (sender, indices) in bySender.sorted(by: { $0.key.uuidString < $1.key.uuidString }) {
            // One typed array per column, in the order of `indices` (WITH ORDINALITY keeps it).
            let rows = indices.map { pending[$0] }
            var data: [String?] = []
            data.reserveCapacity(rows.count)
            for n in rows {
                data.append(try n.request.data.map { String(decoding: try JSONEncoder().encode($0), as: UTF8.self) })
            }
            statements.append(("SELECT set_config('staffcast.user_id', $1, true)", [Self.id(sender)]))
            inserts.append(statements.count)
            // No RETURNING: by the rules the sender may insert the row but not read it back.
            statements.append(("""
                WITH x AS (
                    SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::text[], $6::text[], $7::timestamptz[])
                        WITH ORDINALITY AS x(id, user_id, type, title, message, data, created_at, ord)),
                ins AS (
                    INSERT INTO notifications (id, user_id, sender_id, type, title, message, data, created_at)
                    SELECT id, user_id, $8::uuid, type, title, message, data::jsonb, created_at
                    FROM x WHERE staffcast_may_notify(x.user_id) ORDER BY ord
                    RETURNING 1)
                SELECT x.id FROM x WHERE staffcast_may_notify(x.user_id)
                """, [Self.arrayLiteral(rows.map(\.id)), Self.arrayLiteral(rows.map(\.request.userID)),
                      Self.textArrayLiteral(rows.map(\.request.type)), Self.textArrayLiteral(rows.map(\.request.title)),
                      Self.textArrayLiteral(rows.map(\.request.message)), Self.textArrayLiteral(data),
                      Self.textArrayLiteral(rows.map { RFC3339.format($0.createdAt) }), Self.id(sender)]))
        }
        let results = try conn.pipelinedTransaction(statements)
        var stored: Set<UUID> = []
        for i in inserts {
            let r = results[i]
            for row in 0..<r.rowCount { if let id = r.uuid(row, 0) { stored.insert(id) } }
        }
        return pending.map { n in
            guard stored.contains(n.id) else { return nil }
            return StaffNotification(id: n.id, userID: n.request.userID, type: n.request.type, title: n.request.title,
                                     message: n.request.message, data: n.request.data, read: false, readAt: nil,
                                     createdAt: n.createdAt)
        }
    }
}
