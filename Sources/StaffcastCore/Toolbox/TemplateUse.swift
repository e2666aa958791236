import Foundation

/// A send by template (`send` with `template` instead of `message`): the template's name, and
/// whatever the send itself says, which overrides the template's type, priority and expiry.
public struct TemplateUse: Sendable, Equatable {
    public var name: String
    public var messageType: MessageType?
    public var priority: Priority?
    public var expiresInMinutes: Int?
    /// The server's `escalate_after_minutes` for emergencies (`EscalationPolicy`), applied when
    /// the template makes the send an emergency and the send names no escalation itself.
    public var emergencyEscalationDefault: Int?
    /// The send names its own audience (`teams` given, even empty: the whole event), which
    /// then overrides the template's teams; false: `teams` absent, the template's audience.
    public var ownTeams = false

    public init(name: String, messageType: MessageType? = nil, priority: Priority? = nil, expiresInMinutes: Int? = nil) {
        self.name = name
        self.messageType = messageType
        self.priority = priority
        self.expiresInMinutes = expiresInMinutes
    }

    /// The send this becomes with `template`'s text and defaults.
    public func resolve(_ template: MessageTemplate, into request: SendRequest) -> SendRequest {
        var r = request
        r.message = template.message
        r.messageType = messageType ?? template.messageType
        r.priority = priority ?? template.priority
        r.expiresInMinutes = expiresInMinutes ?? template.expiresInMinutes
        if r.escalateAfterMinutes == nil && r.messageType == .emergency { r.escalateAfterMinutes = emergencyEscalationDefault }
        if !ownTeams && r.teams.isEmpty { r.teams = template.teams }
        r.template = nil
        return r
    }
}

extension SendRequest {
    /// A send of the template `name`; `messageType`, `priority` and `expiresInMinutes`, when
    /// given, override the template's. Validated like any send.
    public static func byTemplate(eventID: UUID, name: String, messageType: String? = nil, priority: String? = nil,
                                  expiresInMinutes: Int? = nil, escalateAfterMinutes: Int? = nil) throws(StaffcastError) -> SendRequest {
        try MessageTemplate.validateName(name)
        // The overrides follow the rules of a send (checked with a stand-in text).
        let checked = try SendRequest(eventID: eventID, message: "-", messageType: messageType, priority: priority,
                                      expiresInMinutes: expiresInMinutes, escalateAfterMinutes: escalateAfterMinutes)
        var r = checked
        r.message = ""
        r.template = TemplateUse(name: name, messageType: messageType == nil ? nil : checked.messageType,
                                 priority: priority == nil ? nil : checked.priority, expiresInMinutes: expiresInMinutes)
        return r
    }
}
