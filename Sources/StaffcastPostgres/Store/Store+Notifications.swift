import Foundation
import StaffcastCore

/// Personal notifications: sent by an event's admins and owners, read by their one user.
extension Store {
    public func createNotification(as sender: UUID, _ request: NotificationRequest) throws -> StaffNotification {
        let dataText: String?
        if let data = request.data {
            dataText = String(decoding: try JSONEncoder().encode(data), as: UTF8.self)
        } else {
            dataText = nil
        }
        do {
            // No RETURNING: the sender may insert the row but, by the rules, not read it back.
            let id = UUID()
            let createdAt = Date()
            _ = try conn.transaction(asUser: sender) { tx in
                try tx.query("""
                    INSERT INTO notifications (id, user_id, sender_id, type, title, message, data, created_at)
                    VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8)
                    """, [Self.id(id), Self.id(request.userID), Self.id(sender), request.type, request.title, request.message,
                          dataText, RFC3339.format(createdAt)])
            }
            return StaffNotification(id: id, userID: request.userID, type: request.type, title: request.title,
                                     message: request.message, data: request.data, read: false, readAt: nil,
                                     createdAt: createdAt)
        } catch let e as PostgresError where e.sqlState == "42501" || e.sqlState == "23503" {
            // RLS refused the row, or the user does not exist: one answer for both, so that
            // nobody learns which users exist outside their events.
            throw StaffcastError.forbidden("You may notify only users of an event where you are admin or owner.")
        }
    }

    public func markNotificationRead(as user: UUID, notification: UUID) throws {
        try conn.transaction(asUser: user) { tx in
            let r = try tx.query("""
                UPDATE notifications SET read = true, read_at = coalesce(read_at, now()) WHERE id = $1 RETURNING id
                """, [Self.id(notification)])
            if r.rowCount == 0 {
                throw StaffcastError.notFound("There is no notification with that id of yours.")
            }
        }
    }

    /// The user's notifications, newest first (unread only, if asked), at most `limit`. A help or
    /// escalation alert (the server's own: it names a message in `data.message_id` and quotes it)
    /// is listed only while the reader may still see that message, as row-level security decides:
    /// an organiser whose access ended kept reading the event's texts and names here (attack round).
    public func notifications(as user: UUID, unreadOnly: Bool, limit: Int = 100) throws -> [StaffNotification] {
        try conn.transaction(asUser: user) { tx in
            try Self.notifications(tx.query("""
                SELECT \(Self.notificationColumns) FROM notifications n
                WHERE n.user_id = $1 AND (NOT $2::bool OR NOT n.read)
                  AND (n.type NOT IN ('help', 'escalation')
                       OR NOT coalesce(n.data->>'message_id' ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$', false)
                       OR EXISTS (SELECT 1 FROM staff_messages m WHERE m.id = (n.data->>'message_id')::uuid))
                ORDER BY n.seq DESC LIMIT $3
                """, [Self.id(user), unreadOnly ? "true" : "false", String(limit)]))
        }
    }
}
