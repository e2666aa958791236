import Foundation

/// Whether a message to teams reaches anyone (docs/protocol.md, Sending to an audience). A send
/// whose named teams and zones hold nobody with access to the event apart from the sender went
/// out as a success that reached no one ("delivered live to 0 of 0"); it is refused instead, and
/// a scheduled send whose teams were deleted or emptied before its time is cancelled with a note.
public enum AudienceCheck {
    /// The refusal of a send to `teams`, all of them empty (apart from the sender): `conflict`,
    /// nothing stored.
    public static func emptyRefusal(_ teams: [String]) -> StaffcastError {
        StaffcastError(.conflict, "No one is in \(names(teams)) apart from you, so this message would reach nobody; nothing was sent. Add people to the team (staffcast team add), wait for check-ins at a zone, or send to the whole event.")
    }

    /// Why a scheduled send to `teams` is not sent at its time, or nil when it may go: `missing`
    /// are those of its teams deleted since it was scheduled; `anyoneThere`, whether the teams
    /// hold anyone apart from the sender. A message to the whole event (no teams) always goes.
    public static func scheduledNote(teams: [String], missing: [String], anyoneThere: Bool) -> String? {
        guard !teams.isEmpty else { return nil }
        if !missing.isEmpty {
            return "not sent: \(names(missing, "and")) no longer exist\(missing.count == 1 ? "s" : "") in this event"
        }
        return anyoneThere ? nil : "not sent: no one was in \(names(teams)) apart from the sender at its time"
    }

    /// `'A'`, `'A' or 'B'`, `'A', 'B' or 'C'` (names shortened to 100 characters, at most 20 of them).
    static func names(_ teams: [String], _ conjunction: String = "or") -> String {
        let quoted = teams.map { "'\($0.prefix(100))'" }
        guard quoted.count > 1 else { return quoted.first ?? "no team" }
        return quoted.dropLast().joined(separator: ", ") + " \(conjunction) " + quoted[quoted.count - 1]
    }
}
