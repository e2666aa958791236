import Foundation
import StaffcastCore

/// Search and the archive (docs/protocol.md): one event's messages by text, type,
/// priority, sender and time, expired ones too when asked. Runs as the user (RLS).
extension Store {
    /// The newest `search.limit` matches (before `search.beforeSeq`), oldest first, and
    /// whether older matches remain. Retracted messages are never found; expired ones only
    /// with `includeExpired`. Text matches ignore case in every script, not only ASCII: the
    /// comparison uses ICU's root collation ("évacuation" finds "ÉVACUATION"), since the
    /// embedded cluster's own locale is C, whose case folding knows only A–Z.
    public func search(as user: UUID, event: UUID, _ search: MessageSearch) throws -> (messages: [StaffMessage], more: Bool) {
        try withAccess(user, event) { tx, _ in
            let senderID = search.sender.flatMap(UUID.init(uuidString:))
            let senderName = senderID == nil ? search.sender.map { "%" + MessageSearch.escapeLike($0) + "%" } : nil
            let page = try Self.messages(tx.query("""
                SELECT * FROM (SELECT \(Self.messageColumns(reader: "$1"))
                    FROM staff_messages m JOIN profiles p ON p.id = m.sender_id
                    WHERE m.event_id = $2 AND m.retracted_at IS NULL AND m.seq < $3
                      AND ($4::text IS NULL OR m.message ILIKE ($4::text COLLATE "und-x-icu"))
                      AND ($5::text IS NULL OR m.message_type = $5::text)
                      AND ($6::text IS NULL OR m.priority = $6::text)
                      AND ($7::uuid IS NULL OR m.sender_id = $7::uuid)
                      AND ($8::text IS NULL OR p.display_name ILIKE ($8::text COLLATE "und-x-icu"))
                      AND ($9::timestamptz IS NULL OR m.sent_at >= $9::timestamptz)
                      AND ($10::timestamptz IS NULL OR m.sent_at <= $10::timestamptz)
                      AND ($11::bool OR \(Self.unexpired))
                    ORDER BY m.seq DESC LIMIT $12) h
                ORDER BY 2
                """, [Self.id(user), Self.id(event), String(search.beforeSeq ?? Int64.max), search.likePattern,
                      search.messageType?.rawValue, search.priority?.rawValue, senderID.map(Self.id), senderName,
                      search.from.map(RFC3339.format), search.to.map(RFC3339.format),
                      search.includeExpired ? "true" : "false", String(search.limit + 1)]))
            // One more than asked (the oldest) tells whether older matches remain.
            return (Array(page.suffix(search.limit)), page.count > search.limit)
        }
    }
}
