import Foundation

/// A validated request to send a staff message, however it arrived (WebSocket `send`,
/// HTTP JSON body, HTTP text body with query parameters). Construction is the validation:
/// a value of this type always satisfies the limits in `Limits`.
public struct SendRequest: Sendable, Equatable {
    public var eventID: UUID
    public var message: String
    public var messageType: MessageType
    public var priority: Priority
    public var expiresInMinutes: Int?
    /// Remind non-readers and tell admins after this many minutes (and each such interval);
    /// nil: the server's default (emergencies escalate, others do not; `EscalationPolicy`).
    public var escalateAfterMinutes: Int?
    /// Send later instead of now (docs/protocol.md); nil: now.
    public var schedule: SendSchedule?
    /// Send even when the same text went to the same event within the duplicate window.
    public var force = false
    /// Send a named template of the event instead of `message` (which is then empty until the
    /// template is resolved, in the database transaction that stores the send).
    public var template: TemplateUse?
    /// Send only to these teams and zones of the event (and its admins and owners); empty: the
    /// whole event. Validated by `withTeams`.
    public var teams: [String] = []
    /// Ask this question with the message (docs/protocol.md, Polls); nil: no poll.
    public var poll: Poll?

    /// At most this many team names on one send.
    public static let maxTeams = 20

    /// `self` addressed as a send's `teams` field says: absent (nil), the whole event, or for
    /// a send by template the template's teams; given, exactly those, and `[]` the whole event
    /// even when the template names teams (what an organiser picked is what is sent).
    public func addressed(to names: [String]?) throws(StaffcastError) -> SendRequest {
        var copy = try withTeams(names ?? [])
        if names != nil { copy.template?.ownTeams = true }
        return copy
    }

    /// `self` addressed to `names` (each a valid team name once normalized, `TeamName`; repeats
    /// dropped, order kept).
    public func withTeams(_ names: [String]) throws(StaffcastError) -> SendRequest {
        var copy = self
        copy.teams = []
        for raw in names {
            // Any spelling of a name finds its team (TeamName): "Gate\u{A0}3" is "Gate 3".
            let name = TeamName.normalize(raw)
            try Team.validateName(name)
            if !copy.teams.contains(name) { copy.teams.append(name) }
        }
        guard copy.teams.count <= Self.maxTeams else {
            throw .invalid("A message may go to at most \(Self.maxTeams) teams at once; got \(copy.teams.count).")
        }
        return copy
    }

    public init(eventID: UUID, message: String, messageType: String? = nil, priority: String? = nil,
                expiresInMinutes: Int? = nil, escalateAfterMinutes: Int? = nil) throws(StaffcastError) {
        try Self.validateText(message)
        var type = MessageType.broadcast
        if let messageType {
            guard let t = MessageType(rawValue: messageType) else {
                throw .invalid("message_type '\(messageType)' is not one of broadcast, alert, emergency.")
            }
            type = t
        }
        var prio = Priority.normal
        if let priority {
            guard let p = Priority(rawValue: priority) else {
                throw .invalid("priority '\(priority)' is not one of low, normal, high, urgent.")
            }
            prio = p
        }
        if let expiresInMinutes, !Limits.expiresInMinutes.contains(expiresInMinutes) {
            throw .invalid("expires_in_minutes must be between \(Limits.expiresInMinutes.lowerBound) and \(Limits.expiresInMinutes.upperBound) (30 days); got \(expiresInMinutes).")
        }
        if let escalateAfterMinutes, !Limits.escalateAfterMinutes.contains(escalateAfterMinutes) {
            throw .invalid("escalate_after_minutes must be between \(Limits.escalateAfterMinutes.lowerBound) and \(Limits.escalateAfterMinutes.upperBound) (a day); got \(escalateAfterMinutes).")
        }
        self.eventID = eventID
        self.message = message
        self.messageType = type
        self.priority = prio
        self.expiresInMinutes = expiresInMinutes
        self.escalateAfterMinutes = escalateAfterMinutes
    }

    /// The rules for a message's text, for a send and an edit alike: not empty, no control
    /// characters (`TextRules`), at most `Limits.maxMessageBytes`.
    public static func validateText(_ message: String) throws(StaffcastError) {
        let trimmed = message.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty else {
            throw .invalid("The message is empty; write the text staff should read.")
        }
        try TextRules.requireStorable(message, field: "message")
        let bytes = message.utf8.count
        guard bytes <= Limits.maxMessageBytes else {
            throw StaffcastError(.tooLarge, "The message is \(bytes) bytes; the limit is \(Limits.maxMessageBytes) bytes.")
        }
    }
}
