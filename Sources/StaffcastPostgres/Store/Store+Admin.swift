import Foundation
import Glibc
import StaffcastCore

/// Set-up done by organisers from the shell (`staffcast admin …`), as the server's own login.
extension Store {
    public func createUser(name: String, email: String? = nil) throws -> UUID {
        let name = try Self.validName(name, what: "user name")
        let email = try email.flatMap { text throws(StaffcastError) in try EmailAddress.validate(text) }
        let id = UUID()
        try conn.query("INSERT INTO profiles (id, display_name, email) VALUES ($1, $2, $3)", [Self.id(id), name, email])
        return id
    }

    /// Sets (or with "" removes) a user's email address (email for the unreached, sql/012).
    public func setEmail(user: UUID, email: String) throws {
        let address = try EmailAddress.validate(email)
        let r = try conn.query("UPDATE profiles SET email = $2 WHERE id = $1 RETURNING id", [Self.id(user), address])
        guard r.rowCount == 1 else { throw StaffcastError.notFound("There is no user \(Self.id(user)).") }
    }

    /// A user's email address, if any.
    public func email(user: UUID) throws -> String? {
        try conn.query("SELECT email FROM profiles WHERE id = $1", [Self.id(user)]).string(0, 0)
    }

    public func createEvent(name: String, startsAt: Date?) throws -> UUID {
        let name = try Self.validName(name, what: "event name")
        let id = UUID()
        try conn.query("INSERT INTO events (id, name, starts_at) VALUES ($1, $2, $3)",
                       [Self.id(id), name, startsAt.map(RFC3339.format)])
        return id
    }

    /// Gives `user` `level` on `event` (or changes it), recorded in the audit log.
    public func grant(event: UUID, user: UUID, level: AccessLevel, actor: String = Store.defaultActor) throws {
        try requireEvent(event)
        try requireUser(user)
        try conn.transaction { tx in
            try tx.query("""
                INSERT INTO event_access (event_id, user_id, access_level) VALUES ($1, $2, $3)
                ON CONFLICT (event_id, user_id) DO UPDATE SET access_level = EXCLUDED.access_level, granted_at = now()
                """, [Self.id(event), Self.id(user), level.rawValue])
            try audit(tx, actor, "grant", event: event, user: user, detail: level.rawValue)
        }
    }

    /// Ends `user`'s access to `event`; false if there was none.
    @discardableResult
    public func revoke(event: UUID, user: UUID, actor: String = Store.defaultActor) throws -> Bool {
        try requireEvent(event)
        try requireUser(user)
        return try conn.transaction { tx in
            let removed = try tx.query("DELETE FROM event_access WHERE event_id = $1 AND user_id = $2",
                                       [Self.id(event), Self.id(user)]).affectedRows > 0
            if removed { try audit(tx, actor, "revoke", event: event, user: user, detail: nil) }
            return removed
        }
    }

    /// Who runs admin commands: the operating-system user (SUDO_USER when run through sudo).
    public static var defaultActor: String {
        let env = ProcessInfo.processInfo.environment
        return env["SUDO_USER"] ?? env["USER"] ?? env["LOGNAME"] ?? "uid \(getuid())"
    }

    func audit(_ tx: PGConnection, _ actor: String, _ action: String, event: UUID?, user: UUID?, detail: String?) throws {
        try tx.query("INSERT INTO audit_log (actor, action, event_id, user_id, detail) VALUES ($1, $2, $3, $4, $5)",
                     [actor, action, event.map(Self.id), user.map(Self.id), detail])
    }

    public struct AuditEntry: Sendable, Equatable, Encodable {
        public var at: String
        public var actor: String
        public var action: String
        public var eventID: String?
        public var userID: String?
        public var detail: String?
        enum CodingKeys: String, CodingKey { case at, actor, action, eventID = "event_id", userID = "user_id", detail }
    }

    /// The newest audit entries first.
    public func auditLog(limit: Int = 100, event: UUID? = nil) throws -> [AuditEntry] {
        let r = try conn.query("""
            SELECT \(Self.epochMicros("at")), actor, action, event_id, user_id, detail FROM audit_log
            WHERE $1::uuid IS NULL OR event_id = $1 ORDER BY id DESC LIMIT $2
            """, [event.map(Self.id), String(limit)])
        return (0..<r.rowCount).map { i in
            AuditEntry(at: r.date(i, 0).map(RFC3339.format) ?? "", actor: r.string(i, 1) ?? "", action: r.string(i, 2) ?? "",
                       eventID: r.string(i, 3), userID: r.string(i, 4), detail: r.string(i, 5))
        }
    }

    public func requireEvent(_ event: UUID) throws {
        let r = try conn.query("SELECT 1 FROM events WHERE id = $1", [Self.id(event)])
        if r.rowCount == 0 { throw StaffcastError.notFound("There is no event \(Self.id(event)).") }
    }

    public func requireUser(_ user: UUID) throws {
        let r = try conn.query("SELECT 1 FROM profiles WHERE id = $1 AND deleted_at IS NULL", [Self.id(user)])
        if r.rowCount == 0 { throw StaffcastError.notFound("There is no user \(Self.id(user)).") }
    }

    static func validName(_ name: String, what: String) throws -> String {
        let trimmed = name.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty else { throw StaffcastError.invalid("The \(what) is empty.") }
        guard trimmed.count <= 200 else { throw StaffcastError.invalid("The \(what) is longer than 200 characters.") }
        // Control characters (terminal escapes among them) and line breaks: refused, from the
        // shell as over HTTP (names are printed one to a line by receipts, reach and lists).
        try TextRules.requireOneLine(trimmed, field: what)
        return trimmed
    }
}

extension Store {
    /// True when `user` owns at least one event (owners may read server status).
    /// The events `user` owns (status shows an owner only those).
    public func ownedEvents(_ user: UUID) throws -> Set<UUID> {
        let r = try conn.query("SELECT event_id FROM event_access WHERE user_id = $1 AND access_level = 'owner'", [Self.id(user)])
        return Set((0..<r.rowCount).compactMap { r.uuid($0, 0) })
    }

    public func isOwnerOfAnyEvent(_ user: UUID) throws -> Bool {
        try conn.query("SELECT EXISTS (SELECT 1 FROM event_access WHERE user_id = $1 AND access_level = 'owner')",
                       [Self.id(user)]).bool(0, 0) ?? false
    }
}
