import Foundation
import StaffcastCore

/// Templates per event (docs/protocol.md), as the user under row-level security.
extension Store {
    static let templateColumns = """
        t.event_id, t.name, t.message, t.message_type, t.priority, t.expires_in_minutes, \(epochMicros("t.created_at")),
        to_json(t.teams)::text
        """

    static func templates(_ r: PGResult) throws -> [MessageTemplate] {
        try (0..<r.rowCount).map { i in
            guard let event = r.uuid(i, 0), let name = r.string(i, 1), let type = r.string(i, 3).flatMap(MessageType.init),
                  let prio = r.string(i, 4).flatMap(Priority.init), let created = r.date(i, 6) else {
                throw PostgresError(.unexpectedResult, "a message_templates row could not be read")
            }
            var t = MessageTemplate(eventID: event, name: name, message: r.string(i, 2) ?? "", messageType: type, priority: prio,
                                    expiresInMinutes: r.int(i, 5), createdAt: created)
            t.teams = Self.jsonStrings(r.string(i, 7))
            return t
        }
    }

    static func noSuchTemplate(_ name: String) -> StaffcastError {
        .notFound("There is no template named '\(name.prefix(100))' for this event; staffcast template list shows them.")
    }

    /// Stores a template (admins and owners). `request` holds its text, type, priority and
    /// expiry (validated as a send); a name already taken is `conflict`.
    public func createTemplate(as user: UUID, name: String, _ asked: SendRequest) throws -> MessageTemplate {
        try MessageTemplate.validateName(name)
        return try withAccess(user, asked.eventID) { tx, summary in
            guard summary.accessLevel.maySend else {
                throw StaffcastError.forbidden("Only admins and owners of an event may create its templates; you are staff.")
            }
            var request = asked
            request.teams = try requireTeams(asked.teams, event: asked.eventID, in: tx)
            return try Self.insertOne(tx, """
                INSERT INTO message_templates AS t (event_id, name, message, message_type, priority, expires_in_minutes, created_by,
                                                    teams)
                VALUES ($1, $2, $3, $4, $5, $6::int, $7, $8::text[]) RETURNING \(Self.templateColumns)
                """, [Self.id(request.eventID), name, request.message, request.messageType.rawValue, request.priority.rawValue,
                      request.expiresInMinutes.map(String.init), Self.id(user), Self.textArray(request.teams)],
                rows: Self.templates, missing: "the template was not returned",
                taken: "This event already has a template named '\(name)'; delete it first or pick another name.")
        }
    }

    /// The event's templates by name (admins and owners).
    public func templates(as user: UUID, event: UUID) throws -> [MessageTemplate] {
        try withAccess(user, event) { tx, summary in
            guard summary.accessLevel.maySend else {
                throw StaffcastError.forbidden("Only admins and owners of the event see its templates.")
            }
            return try Self.templates(tx.query("SELECT \(Self.templateColumns) FROM message_templates t WHERE t.event_id = $1 ORDER BY t.name",
                                               [Self.id(event)]))
        }
    }

    /// Deletes a template (admins and owners); not_found when there is none by that name.
    public func deleteTemplate(as user: UUID, event: UUID, name: String) throws {
        try withAccess(user, event) { tx, summary in
            guard summary.accessLevel.maySend else {
                throw StaffcastError.forbidden("Only admins and owners of the event may delete its templates.")
            }
            let r = try tx.query("DELETE FROM message_templates WHERE event_id = $1 AND name = $2", [Self.id(event), name])
            if r.affectedRows == 0 { throw Self.noSuchTemplate(name) }
        }
    }

    /// `request` with its template's text and defaults, read in `tx` as its user; unchanged
    /// when it names no template.
    func resolvingTemplate(_ request: SendRequest, in tx: PGConnection) throws -> SendRequest {
        guard let use = request.template else { return request }
        let r = try tx.query("SELECT \(Self.templateColumns) FROM message_templates t WHERE t.event_id = $1 AND t.name = $2",
                             [Self.id(request.eventID), use.name])
        guard let template = try Self.templates(r).first else { throw Self.noSuchTemplate(use.name) }
        return use.resolve(template, into: request)
    }
}
