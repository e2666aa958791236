import Foundation
import StaffcastCore

/// Staff replies (docs/protocol.md), as the user under row-level security.
extension Store {
    static let replyColumns = """
        r.message_id, r.event_id, r.user_id, p.display_name, r.status, r.text, \(epochMicros("r.replied_at"))
        """

    static func replies(_ r: PGResult, from column: Int = 0) throws -> [Reply] {
        try (0..<r.rowCount).map { i in
            guard let message = r.uuid(i, column), let event = r.uuid(i, column + 1), let user = r.uuid(i, column + 2),
                  let status = r.string(i, column + 4).flatMap(Reply.Status.init), let at = r.date(i, column + 6) else {
                throw PostgresError(.unexpectedResult, "a message_replies row could not be read")
            }
            return Reply(messageID: message, eventID: event, userID: user, displayName: r.string(i, column + 3) ?? "",
                         status: status, text: r.string(i, column + 5), repliedAt: at)
        }
    }

    /// Stores `user`'s reply to a message of an event they have access to (any level); the
    /// reply as stored. A message one cannot see, or one retracted, is not_found; one expired is
    /// `invalid`, as an answer to its poll is (organisers got a live reply to a message staff no
    /// longer see).
    public func reply(as user: UUID, _ request: ReplyRequest) throws -> Reply {
        try conn.transaction(asUser: user) { tx in
            let found = try tx.query("""
                SELECT event_id, expires_at IS NOT NULL AND expires_at <= now()
                FROM staff_messages WHERE id = $1 AND retracted_at IS NULL
                """, [Self.id(request.messageID)])
            guard let event = found.uuid(0, 0) else { throw StaffcastError.noSuchMessage(request.messageID) }
            guard found.bool(0, 1) != true else {
                throw StaffcastError.invalid("This message has expired, so it takes no more replies. Nothing was stored.")
            }
            let r = try tx.query("""
                WITH r AS (
                    INSERT INTO message_replies (message_id, event_id, user_id, status, text)
                    VALUES ($1, $2, $3, $4, $5) RETURNING *)
                SELECT \(Self.replyColumns) FROM r JOIN profiles p ON p.id = r.user_id
                """, [Self.id(request.messageID), Self.id(event), Self.id(user), request.status.rawValue, request.text])
            guard let stored = try Self.replies(r).first else {
                throw PostgresError(.unexpectedResult, "the reply was not returned")
            }
            return stored
        }
    }

    /// Each person's latest reply to a message, by name; for the event's admins and owners.
    public func replies(as user: UUID, messageID: UUID) throws -> [Reply] {
        try withMessageAdminAccess(user, message: messageID, refusal: "Only admins and owners of the event see replies.") { tx, _ in
            try Self.replies(tx.query("""
                SELECT * FROM (SELECT DISTINCT ON (r.user_id) \(Self.replyColumns)
                    FROM message_replies r JOIN profiles p ON p.id = r.user_id
                    WHERE r.message_id = $1 ORDER BY r.user_id, r.seq DESC) latest
                ORDER BY display_name, user_id
                """, [Self.id(messageID)]))
        }
    }
}
