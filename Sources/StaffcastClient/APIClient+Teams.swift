import Foundation
import StaffcastCore

/// Teams and zones over HTTP (docs/protocol.md, Audiences).
extension APIClient {
    private static func eventPath(_ event: UUID) -> String { "/v1/events/\(event.uuidString.lowercased())" }

    /// A team or zone name as one path segment: as it is, since `raw` percent-encodes the
    /// whole path (URLComponents) and a team name holds no '/'.
    public static func segment(_ name: String) -> String { name }

    public func createTeam(event: UUID, name: String, kind: Team.Kind) throws(ClientError) -> Team {
        try decode(Team.self, try call("POST", Self.eventPath(event) + "/teams", json: TeamRequest(name: name, kind: kind)),
                   what: "a Team")
    }

    private struct TeamList: Decodable { var teams: [Team] }

    public func teams(event: UUID) throws(ClientError) -> [Team] {
        try decode(TeamList.self, try call("GET", Self.eventPath(event) + "/teams"), what: "a list of teams").teams
    }

    public func deleteTeam(event: UUID, name: String) throws(ClientError) {
        _ = try call("DELETE", Self.eventPath(event) + "/teams/" + Self.segment(name))
    }

    public func addTeamMember(event: UUID, team: String, user: UUID) throws(ClientError) {
        _ = try call("PUT", Self.eventPath(event) + "/teams/\(Self.segment(team))/members/\(user.uuidString.lowercased())")
    }

    public func removeTeamMember(event: UUID, team: String, user: UUID) throws(ClientError) {
        _ = try call("DELETE", Self.eventPath(event) + "/teams/\(Self.segment(team))/members/\(user.uuidString.lowercased())")
    }

    private struct MemberList: Decodable { var members: [TeamMember] }

    public func teamMembers(event: UUID, team: String) throws(ClientError) -> [TeamMember] {
        try decode(MemberList.self, try call("GET", Self.eventPath(event) + "/teams/\(Self.segment(team))/members"),
                   what: "a list of members").members
    }

    /// `POST /v1/events/{id}/zones/{name}/checkin`: moves the caller into that zone.
    public func checkIn(event: UUID, zone: String) throws(ClientError) {
        _ = try call("POST", Self.eventPath(event) + "/zones/\(Self.segment(zone))/checkin")
    }
}

/// Polls over HTTP (docs/protocol.md, Polls).
extension APIClient {
    /// `POST /v1/messages/{id}/answers`.
    public func answer(message: UUID, option: Int) throws(ClientError) {
        _ = try call("POST", "/v1/messages/\(message.uuidString.lowercased())/answers",
                     json: PollAnswerRequest(option: option))
    }

    /// `GET /v1/messages/{id}/answers`, decoded and as the server sent it.
    public func answers(message: UUID) throws(ClientError) -> (report: PollAnswers, json: Data) {
        let data = try call("GET", "/v1/messages/\(message.uuidString.lowercased())/answers")
        return (try decode(PollAnswers.self, data, what: "a poll's answers"), data)
    }

    /// A report as CSV (`?format=csv`): receipts, answers, replies or the audit log.
    public func csv(_ path: String) throws(ClientError) -> Data {
        try call("GET", path, query: ["format": "csv"])
    }
}
