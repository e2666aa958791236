import Foundation
import StaffcastCore

/// Every query staffcast makes, on one connection owned by the calling thread.
///
/// Methods named for a user (`…(as user:)`) run in a transaction as that user, so PostgreSQL's
/// row-level security has the last word; they check access first only to give a clear error.
/// Admin methods and the change feed run as the server's own login.
/// Errors: `StaffcastError` for what the caller did wrong (unknown event, no access),
/// `PostgresError` for what the database did.
public struct Store {
    public let conn: PGConnection

    public init(_ conn: PGConnection) { self.conn = conn }

    /// The one row an `INSERT … RETURNING` made, decoded by `rows` (`missing` when there is
    /// none); a unique violation (a name already taken) is `conflict`, said with `taken`.
    static func insertOne<T>(_ tx: PGConnection, _ sql: String, _ params: [String?], rows: (PGResult) throws -> [T],
                             missing: String, taken: String) throws -> T {
        do {
            guard let row = try rows(tx.query(sql, params)).first else { throw PostgresError(.unexpectedResult, missing) }
            return row
        } catch let e as PostgresError where e.sqlState == "23505" {
            throw StaffcastError(.conflict, taken)
        }
    }

    /// Selects a timestamptz as microseconds since 1970, read back with `PGResult.date`.
    static func epochMicros(_ column: String) -> String {
        "(extract(epoch FROM \(column)) * 1000000)::int8"
    }

    /// The columns of a Message; `reader` is a placeholder such as "$1" (or "NULL").
    static func messageColumns(reader: String) -> String {
        messageColumns(readByReader: "EXISTS (SELECT 1 FROM message_reads r WHERE r.message_id = m.id AND r.user_id = \(reader)::uuid)",
                       readerAnswer: "(SELECT pa.option FROM poll_answers pa WHERE pa.message_id = m.id AND pa.user_id = \(reader)::uuid)")
    }

    /// The columns of a Message just inserted in this statement (`INSERT … RETURNING`): nobody
    /// has read or answered it yet, so the two per-row probes (each under row-level security)
    /// are constants.
    static let insertedMessageColumns = messageColumns(readByReader: "false", readerAnswer: "NULL::text")

    private static func messageColumns(readByReader: String, readerAnswer: String) -> String {
        """
        m.id, m.seq, m.event_id, m.sender_id, p.display_name, m.message, m.message_type, m.priority,
        \(epochMicros("m.sent_at")), \(epochMicros("m.expires_at")),
        \(readByReader), m.read_count,
        \(epochMicros("m.edited_at")), m.escalate_after_minutes, to_json(m.teams)::text,
        to_json(m.poll_options)::text,
        CASE WHEN m.poll_options IS NOT NULL THEN \(readerAnswer) END
        """
    }

    /// How many columns `messageColumns` has (a query may add its own after them).
    static let messageColumnCount = 17

    /// Messages that count: not expired, and not retracted (sql/008). History, catch-up,
    /// live fan-out and unread counts all use it.
    static let unexpired = "(m.retracted_at IS NULL AND (m.expires_at IS NULL OR m.expires_at > now()))"

    static func messages(_ r: PGResult) throws -> [StaffMessage] {
        try (0..<r.rowCount).map { i in
            guard let id = r.uuid(i, 0), let seq = r.int64(i, 1), let event = r.uuid(i, 2), let sender = r.uuid(i, 3),
                  let type = r.string(i, 6).flatMap(MessageType.init), let prio = r.string(i, 7).flatMap(Priority.init),
                  let sentAt = r.date(i, 8) else {
                throw PostgresError(.unexpectedResult, "a staff_messages row could not be read")
            }
            var message = StaffMessage(id: id, seq: seq, eventID: event, senderID: sender, senderName: r.string(i, 4) ?? "",
                                       message: r.string(i, 5) ?? "", messageType: type, priority: prio, sentAt: sentAt,
                                       expiresAt: r.date(i, 9), read: r.bool(i, 10) ?? false, readCount: r.int(i, 11) ?? 0,
                                       escalateAfterMinutes: r.int(i, 13))
            message.editedAt = r.date(i, 12)
            message.teams = jsonStrings(r.string(i, 14))
            if let options = r.string(i, 15), options != "null" { message.poll = Poll(unchecked: jsonStrings(options)) }
            message.answer = r.int(i, 16)
            return message
        }
    }

    static let notificationColumns = """
        n.id, n.user_id, n.type, n.title, n.message, n.data::text, n.read,
        \(epochMicros("n.read_at")), \(epochMicros("n.created_at")), n.seq
        """

    static func notifications(_ r: PGResult) throws -> [StaffNotification] {
        try (0..<r.rowCount).map { i in
            guard let id = r.uuid(i, 0), let user = r.uuid(i, 1), let created = r.date(i, 8) else {
                throw PostgresError(.unexpectedResult, "a notifications row could not be read")
            }
            let data = r.string(i, 5).flatMap { try? JSONDecoder().decode(JSONValue.self, from: Data($0.utf8)) }
            return StaffNotification(id: id, userID: user, type: r.string(i, 2) ?? "", title: r.string(i, 3) ?? "",
                                     message: r.string(i, 4) ?? "", data: data, read: r.bool(i, 6) ?? false,
                                     readAt: r.date(i, 7), createdAt: created)
        }
    }

    static func id(_ u: UUID) -> String { u.wireText }

    /// A `uuid[]` (or `text[]` of UUIDs) as PostgreSQL prints it: `{a,b,c}`.
    static func uuidArray(_ text: String?) -> [UUID] {
        guard let text else { return [] }
        return text.trimmingCharacters(in: CharacterSet(charactersIn: "{}")).split(separator: ",")
            .compactMap { UUID(wireText: String($0).trimmingCharacters(in: CharacterSet(charactersIn: "\""))) }
    }

    /// UUIDs as a PostgreSQL array literal.
    static func arrayLiteral(_ ids: [UUID]) -> String { "{" + ids.map(id).joined(separator: ",") + "}" }

    /// Texts as a PostgreSQL array literal (for `$1::text[]`, `$1::timestamptz[]`…): each element
    /// quoted with `"` and `\` escaped, nil as an unquoted NULL.
    static func textArrayLiteral(_ values: [String?]) -> String {
        var out = "{"
        for (i, value) in values.enumerated() {
            if i > 0 { out += "," }
            guard let value else { out += "NULL"; continue }
            out += "\""
            for c in value.unicodeScalars {
                if c == "\"" || c == "\\" { out += "\\" }
                out.unicodeScalars.append(c)
            }
            out += "\""
        }
        return out + "}"
    }
}
