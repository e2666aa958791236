import Foundation
import StaffcastCore

/// Teams and zones of an event (docs/protocol.md, Audiences; sql/011), as the user under
/// row-level security. Admins and owners manage them; anyone on the event checks into a zone.
extension Store {
    static let teamColumns = """
        t.name, t.event_id, t.kind,
        (SELECT count(*) FROM team_members tm WHERE tm.event_id = t.event_id AND tm.team_name = t.name)
        """

    static func teams(_ r: PGResult) throws -> [Team] {
        try (0..<r.rowCount).map { i in
            guard let name = r.string(i, 0), let event = r.uuid(i, 1), let kind = r.string(i, 2).flatMap(Team.Kind.init) else {
                throw PostgresError(.unexpectedResult, "a teams row could not be read")
            }
            return Team(name: name, eventID: event, kind: kind, members: r.int(i, 3) ?? 0)
        }
    }

    /// The first key of the advisory lock that serialises the creation of an event's teams
    /// (the second: a hash of the event's id).
    static let teamNamesLock = 7_354_002

    static func noSuchTeam(_ name: String) -> StaffcastError {
        .notFound("There is no team or zone named '\(name.prefix(100))' in this event; staffcast team list shows them.")
    }

    private func requireOrganiser(_ summary: EventSummary, _ what: String) throws {
        guard summary.accessLevel.maySend else {
            throw StaffcastError.forbidden("Only admins and owners of the event may \(what); you are staff.")
        }
    }

    /// Creates a team or zone (admins and owners) under its normalized name (`TeamName`); a
    /// name already taken by a team or zone of the event, but for case, is `conflict` naming it.
    public func createTeam(as user: UUID, event: UUID, name raw: String, kind: Team.Kind) throws -> Team {
        let name = try TeamName.validatedNew(raw)
        return try withAccess(user, event) { tx, summary in
            try requireOrganiser(summary, "create teams")
            // One create per event at a time, so "Security" and "security" cannot both pass the check.
            try tx.query("SELECT pg_advisory_xact_lock(\(Self.teamNamesLock), hashtext($1))", [Self.id(event)])
            let existing = try tx.query("SELECT name, kind FROM teams WHERE event_id = $1", [Self.id(event)])
            for i in 0..<existing.rowCount {
                guard let other = existing.string(i, 0), TeamName.clashes(other, name) else { continue }
                throw StaffcastError(.conflict, "This event already has a \(existing.string(i, 1) ?? "team") named '\(other.prefix(100))'; names that differ only in case, spaces or accents' encoding are the same. Use it, or pick another name.")
            }
            return try Self.insertOne(tx, """
                INSERT INTO teams AS t (event_id, name, kind, created_by) VALUES ($1, $2, $3, $4)
                RETURNING \(Self.teamColumns)
                """, [Self.id(event), name, kind.rawValue, Self.id(user)],
                rows: Self.teams, missing: "the team was not returned",
                taken: "This event already has a team or zone named '\(name)'.")
        }
    }

    /// The event's teams and zones by name, with their sizes (anyone on the event: staff need
    /// zone names to check in; staff see only the members of their own teams counted).
    public func teams(as user: UUID, event: UUID) throws -> [Team] {
        try withAccess(user, event) { tx, _ in
            try Self.teams(tx.query("SELECT \(Self.teamColumns) FROM teams t WHERE t.event_id = $1 ORDER BY t.kind, t.name",
                                    [Self.id(event)]))
        }
    }

    /// Deletes a team or zone and its memberships (admins and owners). Messages already sent
    /// to it keep their audience.
    public func deleteTeam(as user: UUID, event: UUID, name raw: String) throws {
        let name = TeamName.normalize(raw)
        try withAccess(user, event) { tx, summary in
            try requireOrganiser(summary, "delete teams")
            let stored = try storedTeam(tx, event: event, name: name).name
            let r = try tx.query("DELETE FROM teams WHERE event_id = $1 AND name = $2", [Self.id(event), stored])
            if r.affectedRows == 0 { throw Self.noSuchTeam(name) }
        }
    }

    /// Adds `member` (who must have access to the event) to a team; for a zone, moves them out
    /// of any other zone of the event. True when they were not in it yet.
    @discardableResult
    public func addTeamMember(as user: UUID, event: UUID, team raw: String, member: UUID) throws -> Bool {
        return try withAccess(user, event) { tx, summary in
            try requireOrganiser(summary, "change teams")
            let (team, kind) = try storedTeam(tx, event: event, name: TeamName.normalize(raw))
            let access = try tx.query("SELECT 1 FROM event_access WHERE event_id = $1 AND user_id = $2",
                                      [Self.id(event), Self.id(member)])
            guard access.rowCount == 1 else {
                throw StaffcastError.notFound("User \(Self.id(member)) has no access to this event; grant it first (staffcast admin grant).")
            }
            if kind == .zone {
                try tx.query("""
                    DELETE FROM team_members WHERE event_id = $1 AND user_id = $2 AND kind = 'zone' AND team_name <> $3
                    """, [Self.id(event), Self.id(member), team])
            }
            return try tx.query("""
                INSERT INTO team_members (event_id, team_name, kind, user_id) VALUES ($1, $2, $3, $4)
                ON CONFLICT (event_id, team_name, user_id) DO NOTHING
                """, [Self.id(event), team, kind.rawValue, Self.id(member)]).affectedRows > 0
        }
    }

    /// Removes `member` from a team (admins and owners); not_found when they were not in it.
    public func removeTeamMember(as user: UUID, event: UUID, team raw: String, member: UUID) throws {
        try withAccess(user, event) { tx, summary in
            try requireOrganiser(summary, "change teams")
            let team = try storedTeam(tx, event: event, name: TeamName.normalize(raw)).name
            let r = try tx.query("DELETE FROM team_members WHERE event_id = $1 AND team_name = $2 AND user_id = $3",
                                 [Self.id(event), team, Self.id(member)])
            if r.affectedRows == 0 {
                throw StaffcastError.notFound("User \(Self.id(member)) is not in '\(team.prefix(100))'.")
            }
        }
    }

    /// A team's members by name (admins and owners).
    public func teamMembers(as user: UUID, event: UUID, team raw: String) throws -> [TeamMember] {
        return try withAccess(user, event) { tx, summary in
            try requireOrganiser(summary, "see team members")
            let team = try storedTeam(tx, event: event, name: TeamName.normalize(raw)).name
            let r = try tx.query("""
                SELECT m.user_id, p.display_name FROM team_members m JOIN profiles p ON p.id = m.user_id
                WHERE m.event_id = $1 AND m.team_name = $2 ORDER BY p.display_name, m.user_id
                """, [Self.id(event), team])
            return (0..<r.rowCount).compactMap { i in
                r.uuid(i, 0).map { TeamMember(userID: $0, displayName: r.string(i, 1) ?? "") }
            }
        }
    }

    /// Moves the caller into zone `name` of `event`, out of any other (anyone on the event).
    public func checkIn(as user: UUID, event: UUID, zone raw: String) throws -> Team {
        return try withAccess(user, event) { tx, _ in
            let (name, kind) = try storedTeam(tx, event: event, name: TeamName.normalize(raw))
            guard kind == .zone else {
                throw StaffcastError.invalid("'\(name.prefix(100))' is a team, not a zone: only zones take check-ins.")
            }
            guard try tx.query("SELECT staffcast_zone_checkin($1, $2)", [Self.id(event), name]).bool(0, 0) == true else {
                throw Self.noSuchTeam(name)
            }
            guard let t = try Self.teams(tx.query("SELECT \(Self.teamColumns) FROM teams t WHERE t.event_id = $1 AND t.name = $2",
                                                  [Self.id(event), name])).first else { throw Self.noSuchTeam(name) }
            return t
        }
    }

    /// The team or zone `name` of `event` as stored, and its kind: found the way names are
    /// compared (`TeamName.clashes`: "security" finds "Security"), so that a spelling refused
    /// as taken is also one that finds it. not_found when there is none.
    func storedTeam(_ tx: PGConnection, event: UUID, name: String) throws -> (name: String, kind: Team.Kind) {
        let exact = try tx.query("SELECT name, kind FROM teams WHERE event_id = $1 AND name = $2", [Self.id(event), name])
        if let stored = exact.string(0, 0), let kind = exact.string(0, 1).flatMap(Team.Kind.init) { return (stored, kind) }
        let all = try tx.query("SELECT name, kind FROM teams WHERE event_id = $1", [Self.id(event)])
        for i in 0..<all.rowCount {
            guard let stored = all.string(i, 0), TeamName.clashes(stored, name),
                  let kind = all.string(i, 1).flatMap(Team.Kind.init) else { continue }
            return (stored, kind)
        }
        throw Self.noSuchTeam(name)
    }
}

/// Audiences on sends: team names in and out of SQL, and the not_found of an unknown one.
extension Store {
    /// A JSON array of strings (`to_json(text[])`), as PostgreSQL printed it.
    static func jsonStrings(_ text: String?) -> [String] {
        // Most messages go to everyone, so their teams read back as `[]`: answered without a
        // decoder (a JSONDecoder per row was ~4 % of the server's CPU per send, profiled).
        guard let text, text != "[]", let data = text.data(using: .utf8) else { return [] }
        return (try? JSONDecoder().decode([String].self, from: data)) ?? []
    }

    /// Strings as a `text[]` literal, each quoted and escaped.
    static func textArray(_ items: [String]) -> String {
        "{" + items.map { item in
            "\"" + item.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
        }.joined(separator: ",") + "}"
    }

    /// `names` as the teams and zones of `event` are stored (found as `storedTeam` finds them:
    /// "security" is "Security"); not_found naming the first that is none (read in `tx`, as its
    /// user). Most sends name teams exactly as stored: one query then.
    func requireTeams(_ names: [String], event: UUID, in tx: PGConnection) throws -> [String] {
        guard !names.isEmpty else { return [] }
        let r = try tx.query("SELECT name FROM teams WHERE event_id = $1 AND name = ANY ($2::text[])",
                             [Self.id(event), Self.textArray(names)])
        let found = Set((0..<r.rowCount).compactMap { r.string($0, 0) })
        var stored: [String] = []
        for name in names {
            if found.contains(name) {
                stored.append(name)
                continue
            }
            do {
                stored.append(try storedTeam(tx, event: event, name: name).name)
            } catch let e as StaffcastError where e.code == .notFound {
                throw StaffcastError.notFound("There is no team or zone named '\(name.prefix(100))' in this event (staffcast team list shows them).")
            }
        }
        // "Security" and "security" in one request are one team.
        var seen = Set<String>()
        return stored.filter { seen.insert($0).inserted }
    }

    /// Throws `conflict` (`AudienceCheck.emptyRefusal`) when `names` (teams and zones of
    /// `event` that exist) hold no one apart from `sender` (read in `tx`, as an organiser).
    func requireAudience(_ names: [String], event: UUID, sender: UUID, in tx: PGConnection) throws {
        guard !names.isEmpty else { return }
        let r = try tx.query("SELECT \(Self.someoneIn(teams: "$2::text[]", event: "$1::uuid", besides: "$3::uuid"))",
                             [Self.id(event), Self.textArray(names), Self.id(sender)])
        if r.bool(0, 0) != true { throw AudienceCheck.emptyRefusal(names) }
    }

    /// SQL that is true when the teams and zones `teams` of `event` hold someone other than
    /// `besides` (members have access to the event: sql/011's foreign key).
    static func someoneIn(teams: String, event: String, besides: String) -> String {
        "EXISTS (SELECT 1 FROM team_members tm WHERE tm.event_id = \(event) AND tm.team_name = ANY (\(teams)) AND tm.user_id <> \(besides))"
    }

    /// SQL: message `m` is for `user` (whose level on its event is `level`, a column that may
    /// be NULL): sent to the whole event, or `user` is in its audience, or is an admin or owner
    /// now. The predicate of row-level security (sql/011) for paths that run as the server's
    /// login; a message to the whole event costs one array comparison.
    static func messageIsFor(user: String, level: String) -> String {
        """
        (m.teams = '{}' OR \(level) IN ('admin','owner')
         OR EXISTS (SELECT 1 FROM message_audience ma WHERE ma.message_id = m.id AND ma.user_id = \(user)))
        """
    }

    /// SQL: `user`'s unread count on `event` (staffcast_unread_count, sql/011) given
    /// `untargeted`, the event's count of unexpired messages to everyone (counted once for a
    /// batch of users, never once per user: per user it was a scan of the event's messages
    /// whenever the planner judged the event large; a read storm of 937 marks on a
    /// 50,000-message log took 16.5 s, auto_explain; docs/performance.md), and `ownSends`, the
    /// user's own unexpired messages there (both from `eventSendCounts`).
    static func unreadCount(user: String, event: String, untargeted: String, ownSends: String) -> String {
        """
        \(untargeted)
            + (SELECT count(*) FROM message_audience ma JOIN staff_messages m ON m.id = ma.message_id
                WHERE ma.user_id = \(user) AND ma.event_id = \(event) AND \(Self.unexpired))
            - \(ownSends)
            - (SELECT count(*) FROM message_reads r JOIN staff_messages m ON m.id = r.message_id
                WHERE r.user_id = \(user) AND r.event_id = \(event) AND m.sender_id <> \(user) AND \(Self.unexpired)
                  AND (m.teams = '{}' OR EXISTS (SELECT 1 FROM message_audience ma
                                                 WHERE ma.message_id = m.id AND ma.user_id = \(user))))
        """
    }

    /// SQL for a CTE body: one pass over each of `events` (a SELECT of event ids), its
    /// unexpired messages counted by sender: rows (event_id, sender_id, untargeted, sent), where
    /// `untargeted` counts those to everyone (their sum is the event's total) and `sent` all of
    /// the sender's. A batch's unread counts take both from here, so nothing is counted once
    /// per reader: probed per reader, a reader's own sends were a pass over the event each
    /// whenever the planner misjudged a sender's share (few senders: each looks like a large
    /// part of the event), and filtered against all readers at once, a pass that compared
    /// every message with every reader (a read batch of 78 took 2.2 s, one of 999 415 ms, on a
    /// 37,000-message log: auto_explain; docs/performance.md).
    static func eventSendCounts(events: String) -> String {
        """
        SELECT m.event_id, m.sender_id, count(*) FILTER (WHERE m.teams = '{}') AS untargeted, count(*) AS sent
        FROM staff_messages m
        WHERE m.event_id IN (\(events)) AND \(Self.unexpired)
        GROUP BY m.event_id, m.sender_id
        """
    }

    /// The event's audit entries, newest first, for its admins and owners (as the user, through
    /// staffcast_event_audit: nobody reads audit_log directly, sql/011).
    public func eventAudit(as user: UUID, event: UUID, limit: Int) throws -> [AuditEntry] {
        try withAdminAccess(user, event, refusal: "Only admins and owners of the event may read its audit log.") { tx in
            let r = try tx.query("""
                SELECT \(Self.epochMicros("at")), actor, action, event_id, user_id, detail FROM staffcast_event_audit($1, $2)
                """, [Self.id(event), String(limit)])
            return (0..<r.rowCount).map { i in
                AuditEntry(at: r.date(i, 0).map(RFC3339.format) ?? "", actor: r.string(i, 1) ?? "", action: r.string(i, 2) ?? "",
                           eventID: r.string(i, 3), userID: r.string(i, 4), detail: r.string(i, 5))
            }
        }
    }
}
