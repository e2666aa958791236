import Foundation
import StaffcastCore

/// The organiser's toolbox over HTTP (docs/protocol.md): scheduled sends and search.
extension APIClient {
    private static func path(_ id: UUID) -> String { id.uuidString.lowercased() }

    /// A send for later: exactly one of `sendAt` (RFC 3339) and `beforeStart` (`2h`). 202 + Scheduled.
    public func scheduleMessage(event: UUID, message: String, type: String?, priority: String?, expiresInMinutes: Int?,
                                sendAt: String?, beforeStart: String?, teams: [String] = []) throws(ClientError) -> ScheduledMessage {
        let body = SendBody(message: message, messageType: type, priority: priority, expiresInMinutes: expiresInMinutes,
                            sendAt: sendAt, beforeStart: beforeStart, teams: teams)
        let data = try call("POST", "/v1/events/\(Self.path(event))/messages",
                            json: body)
        return try decode(ScheduledMessage.self, data, what: "a Scheduled object")
    }

    private struct ScheduledList: Decodable { var scheduled: [ScheduledMessage] }

    public func scheduled(event: UUID) throws(ClientError) -> [ScheduledMessage] {
        try decode(ScheduledList.self, try call("GET", "/v1/events/\(Self.path(event))/scheduled"), what: "a list of scheduled sends").scheduled
    }

    public func cancelScheduled(_ id: UUID) throws(ClientError) -> ScheduledMessage {
        try decode(ScheduledMessage.self, try call("DELETE", "/v1/scheduled/\(Self.path(id))"), what: "a Scheduled object")
    }

    /// `GET /v1/events/{id}/messages` with search filters (`q`, `type`, `priority`, `sender`,
    /// `from`, `to`, `include_expired`, `limit`, `before_seq`).
    public func searchMessages(event: UUID, query: [String: String]) throws(ClientError) -> MessagesPage {
        try decode(MessagesPage.self, try call("GET", "/v1/events/\(Self.path(event))/messages", query: query), what: "a list of messages")
    }
}

extension APIClient {
    /// `PATCH /v1/messages/{id}`: the corrected message.
    public func editMessage(_ id: UUID, text: String) throws(ClientError) -> StaffMessage {
        let data = try call("PATCH", "/v1/messages/\(id.uuidString.lowercased())",
                            json: EditBody(message: text))
        return try decode(StaffMessage.self, data, what: "a Message")
    }

    /// `DELETE /v1/messages/{id}`.
    public func retractMessage(_ id: UUID) throws(ClientError) {
        _ = try call("DELETE", "/v1/messages/\(id.uuidString.lowercased())")
    }
}

extension APIClient {
    private struct RepliesBody: Decodable { var replies: [Reply] }

    /// `GET /v1/messages/{id}/replies`: each person's latest reply.
    public func replies(_ messageID: UUID) throws(ClientError) -> [Reply] {
        let data = try call("GET", "/v1/messages/\(messageID.uuidString.lowercased())/replies")
        return try decode(RepliesBody.self, data, what: "a list of replies").replies
    }
}

extension APIClient {
    private struct TemplateList: Decodable { var templates: [MessageTemplate] }

    public func createTemplate(event: UUID, name: String, message: String, type: String?, priority: String?,
                               expiresInMinutes: Int?) throws(ClientError) -> MessageTemplate {
        let body = TemplateBody(name: name, message: message, messageType: type, priority: priority,
                                expiresInMinutes: expiresInMinutes)
        let data = try call("POST", "/v1/events/\(event.uuidString.lowercased())/templates",
                            json: body)
        return try decode(MessageTemplate.self, data, what: "a Template")
    }

    public func templates(event: UUID) throws(ClientError) -> [MessageTemplate] {
        let data = try call("GET", "/v1/events/\(event.uuidString.lowercased())/templates")
        return try decode(TemplateList.self, data, what: "a list of templates").templates
    }

    public func deleteTemplate(event: UUID, name: String) throws(ClientError) {
        // URLComponents percent-encodes the path (a name has no '/').
        _ = try call("DELETE", "/v1/events/\(event.uuidString.lowercased())/templates/\(name)")
    }

    /// A send of the template `name` (201 + Message).
    public func sendTemplate(event: UUID, name: String, type: String?, priority: String?, expiresInMinutes: Int?,
                             force: Bool, teams: [String] = [], escalateAfterMinutes: Int? = nil) throws(ClientError) -> StaffMessage {
        let body = SendBody(template: name, messageType: type, priority: priority, expiresInMinutes: expiresInMinutes,
                            escalateAfterMinutes: escalateAfterMinutes, force: force, teams: teams)
        let data = try call("POST", "/v1/events/\(event.uuidString.lowercased())/messages",
                            json: body)
        return try decode(StaffMessage.self, data, what: "a Message")
    }
}
