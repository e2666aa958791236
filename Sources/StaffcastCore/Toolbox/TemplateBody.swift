import Foundation

/// The body of `POST /v1/events/{id}/templates`:
/// `{"name","message","message_type"?,"priority"?,"expires_in_minutes"?,"teams"?}`. The server
/// decodes and validates it; `APIClient.createTemplate` encodes it.
public struct TemplateBody: Sendable, Equatable, Codable {
    public var name: String?
    public var message: String?
    public var messageType: String?
    public var priority: String?
    public var expiresInMinutes: Int64?
    public var teams: [String]?

    public init(name: String, message: String, messageType: String? = nil, priority: String? = nil,
                expiresInMinutes: Int? = nil, teams: [String] = []) {
        self.name = name
        self.message = message
        self.messageType = messageType
        self.priority = priority
        self.expiresInMinutes = expiresInMinutes.map(Int64.init)
        self.teams = teams.isEmpty ? nil : teams
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case name, message, priority, teams, messageType = "message_type", expiresInMinutes = "expires_in_minutes"
    }

    public init(from decoder: Decoder) throws {
        let f = try WireFields(decoder)
        try f.refuseUnknown(KnownFields(CodingKeys.allCases.map(\.rawValue)), in: "A template")
        name = try f.string("name")
        message = try f.string("message")
        messageType = try f.string("message_type")
        priority = try f.string("priority")
        expiresInMinutes = try f.int64("expires_in_minutes", min: Int64.min)
        teams = try f.strings("teams")
    }

    /// The template's name and the send it stands for.
    public func validated(eventID: UUID) throws(StaffcastError) -> (name: String, send: SendRequest) {
        guard let name, let message else { throw .invalid("A template needs the string fields name and message.") }
        try MessageTemplate.validateName(name)
        let send = try SendRequest(eventID: eventID, message: message, messageType: messageType, priority: priority,
                                   expiresInMinutes: expiresInMinutes.map { Int(clamping: $0) })
        return (name, try send.withTeams(teams ?? []))
    }
}
