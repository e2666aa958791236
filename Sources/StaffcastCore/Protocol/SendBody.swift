import Foundation

/// The fields of a send as they travel: the JSON body of `POST /v1/events/{id}/messages` and
/// the fields of a WebSocket `send` frame (docs/protocol.md). The server decodes it (with
/// errors that name the field) and validates it into a `SendRequest`; `APIClient` encodes it.
/// Absent fields are left out when encoded.
public struct SendBody: Sendable, Equatable, Codable {
    public var message: String?
    public var template: String?
    public var messageType: String?
    public var priority: String?
    public var expiresInMinutes: Int64?
    public var escalateAfterMinutes: Int64?
    public var sendAt: String?
    public var beforeStart: String?
    public var force: Bool?
    public var teams: [String]?
    public var poll: Poll?

    public init(message: String? = nil, template: String? = nil, messageType: String? = nil, priority: String? = nil,
                expiresInMinutes: Int? = nil, escalateAfterMinutes: Int? = nil, sendAt: String? = nil,
                beforeStart: String? = nil, force: Bool = false, teams: [String] = [], poll: Poll? = nil) {
        self.message = message
        self.template = template
        self.messageType = messageType
        self.priority = priority
        self.expiresInMinutes = expiresInMinutes.map(Int64.init)
        self.escalateAfterMinutes = escalateAfterMinutes.map(Int64.init)
        self.sendAt = sendAt
        self.beforeStart = beforeStart
        self.force = force ? true : nil
        self.teams = teams.isEmpty ? nil : teams
        self.poll = poll
    }

    /// The body of a validated request (a template send carries the template's name).
    public init(_ send: SendRequest) {
        let schedule: (at: String?, before: String?)
        switch send.schedule {
        case .at(let date)?: schedule = (RFC3339.format(date), nil)
        case .beforeStart(let lead)?: schedule = (nil, lead.description)
        case nil: schedule = (nil, nil)
        }
        if let use = send.template {
            self.init(template: use.name, messageType: use.messageType?.rawValue, priority: use.priority?.rawValue,
                      expiresInMinutes: use.expiresInMinutes, escalateAfterMinutes: send.escalateAfterMinutes,
                      sendAt: schedule.at, beforeStart: schedule.before, force: send.force, teams: send.teams, poll: send.poll)
            // `teams: []` said aloud: the whole event, not the template's teams.
            if use.ownTeams && send.teams.isEmpty { self.teams = [] }
        } else {
            self.init(message: send.message, messageType: send.messageType.rawValue, priority: send.priority.rawValue,
                      expiresInMinutes: send.expiresInMinutes, escalateAfterMinutes: send.escalateAfterMinutes,
                      sendAt: schedule.at, beforeStart: schedule.before, force: send.force, teams: send.teams, poll: send.poll)
        }
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case message, template, priority, force, teams, poll
        case messageType = "message_type", expiresInMinutes = "expires_in_minutes"
        case escalateAfterMinutes = "escalate_after_minutes", sendAt = "send_at", beforeStart = "before_start"
    }

    /// The fields a send's JSON body may hold.
    public static let fields = KnownFields(CodingKeys.allCases.map(\.rawValue))

    /// The JSON body of `POST /v1/events/{id}/messages`: a field outside `fields` is refused (a
    /// WebSocket `send` frame goes through `init(_:)`, beside `op`, `event_id` and `request_id`).
    public init(from decoder: Decoder) throws {
        let f = try WireFields(decoder)
        try f.refuseUnknown(Self.fields, in: "The JSON body")
        try self.init(f)
    }

    /// Reads the fields (errors name the field at fault); the poll is checked here already.
    public init(_ f: WireFields) throws(StaffcastError) {
        expiresInMinutes = try f.int64("expires_in_minutes", min: Int64.min)
        escalateAfterMinutes = try f.int64("escalate_after_minutes", min: Int64.min)
        message = try f.string("message")
        template = try f.string("template")
        messageType = try f.string("message_type")
        priority = try f.string("priority")
        sendAt = try f.string("send_at")
        beforeStart = try f.string("before_start")
        force = try f.bool("force")
        teams = try f.strings("teams")
        poll = try Poll.from(f)
    }

    /// The validated send. `who` starts the sentences about a missing or doubled text: "send"
    /// on a WebSocket, "The JSON body" over HTTP.
    public func request(eventID: UUID, who: String) throws(StaffcastError) -> SendRequest {
        let minutes = expiresInMinutes.map { Int(clamping: $0) }
        let escalate = escalateAfterMinutes.map { Int(clamping: $0) }
        var send: SendRequest
        switch (message, template) {
        case (let message?, nil):
            send = try SendRequest(eventID: eventID, message: message, messageType: messageType, priority: priority,
                                   expiresInMinutes: minutes, escalateAfterMinutes: escalate)
        case (nil, let name?):
            send = try SendRequest.byTemplate(eventID: eventID, name: name, messageType: messageType, priority: priority,
                                              expiresInMinutes: minutes, escalateAfterMinutes: escalate)
        case (.some, .some):
            throw .invalid("\(who) takes \"message\" or \"template\", not both.")
        case (nil, nil):
            throw .invalid("\(who) needs a \"message\" field with the text to send (or a \"template\" name).")
        }
        send.schedule = try SendSchedule.from(sendAt: sendAt, beforeStart: beforeStart)
        send.force = force ?? false
        send.poll = poll
        return try send.addressed(to: teams)
    }
}
