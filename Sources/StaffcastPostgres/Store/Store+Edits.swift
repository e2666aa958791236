import Foundation
import StaffcastCore

/// Edit and retract (docs/protocol.md), as the user under row-level security. The triggers of
/// sql/008 keep every version in `message_changes` (the audit, and the log that servers follow
/// to send `message_updated` / `message_retracted` live) and refuse staff even if these checks
/// had a bug.
extension Store {
    /// The event of a message the user can see, whether it was retracted and whether it has
    /// expired; not_found otherwise.
    private func visibleMessage(_ user: UUID, _ message: UUID) throws -> (event: UUID, retracted: Bool, expired: Bool) {
        let r = try conn.transaction(asUser: user) { tx in
            try tx.query("SELECT event_id, retracted_at IS NOT NULL, expires_at <= now() FROM staff_messages WHERE id = $1",
                         [Self.id(message)])
        }
        guard let event = r.uuid(0, 0) else {
            throw StaffcastError.noSuchMessage(message)
        }
        return (event, r.bool(0, 1) ?? false, r.bool(0, 2) ?? false)
    }

    /// Replaces a message's text (admins and owners of its event, its sender among them) and
    /// returns it as the editor sees it, with `edited_at`. An expired message is refused like a
    /// retracted one: expired messages are never delivered, and an edit would be (`message_updated`).
    public func editMessage(as user: UUID, messageID: UUID, text: String) throws -> StaffMessage {
        try SendRequest.validateText(text)
        let found = try visibleMessage(user, messageID)
        guard !found.retracted else {
            throw StaffcastError.notFound("Message \(Self.id(messageID)) was retracted; send a new one instead.")
        }
        guard !found.expired else {
            throw StaffcastError.notFound("Message \(Self.id(messageID)) has expired, so nobody would see the edit; send a new one instead.")
        }
        return try withAccess(user, found.event) { tx, summary in
            guard summary.accessLevel.maySend else {
                throw StaffcastError.forbidden("Only the event's admins and owners may edit a message (its sender too, while admin or owner); you are staff on this event.")
            }
            let r = try tx.query("""
                WITH m AS (
                    UPDATE staff_messages SET message = $2, edited_at = now()
                    WHERE id = $1 AND retracted_at IS NULL AND (expires_at IS NULL OR expires_at > now()) RETURNING *)
                SELECT \(Self.messageColumns(reader: "$3")) FROM m JOIN profiles p ON p.id = m.sender_id
                """, [Self.id(messageID), text, Self.id(user)])
            guard let message = try Self.messages(r).first else {
                throw StaffcastError.notFound("Message \(Self.id(messageID)) was retracted or expired meanwhile; nothing was changed.")
            }
            return message
        }
    }

    /// Retracts a message (admins and owners of its event); returns its event. Retracting one
    /// already retracted changes nothing and answers the same.
    public func retractMessage(as user: UUID, messageID: UUID) throws -> UUID {
        let found = try visibleMessage(user, messageID)
        return try withAccess(user, found.event) { tx, summary in
            guard summary.accessLevel.maySend else {
                throw StaffcastError.forbidden("Only the event's admins and owners may retract a message (its sender too, while admin or owner); you are staff on this event.")
            }
            try tx.query("UPDATE staff_messages SET retracted_at = now() WHERE id = $1 AND retracted_at IS NULL",
                         [Self.id(messageID)])
            return found.event
        }
    }

    /// One version of a message, from the audit (`message_changes`).
    public struct MessageVersion: Sendable, Equatable {
        public var action: String
        public var oldMessage: String
        public var newMessage: String?
        public var actorID: UUID?
        public var at: Date
    }

    /// Every change of a message, oldest first (admins and owners of its event; RLS).
    public func messageVersions(as user: UUID, messageID: UUID) throws -> [MessageVersion] {
        try conn.transaction(asUser: user) { tx in
            let r = try tx.query("""
                SELECT action, old_message, new_message, actor_id, \(Self.epochMicros("changed_at"))
                FROM message_changes WHERE message_id = $1 ORDER BY seq
                """, [Self.id(messageID)])
            return (0..<r.rowCount).compactMap { i in
                guard let action = r.string(i, 0), let old = r.string(i, 1), let at = r.date(i, 4) else { return nil }
                return MessageVersion(action: action, oldMessage: old, newMessage: r.string(i, 2), actorID: r.uuid(i, 3), at: at)
            }
        }
    }
}
