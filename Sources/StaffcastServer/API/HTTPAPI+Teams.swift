import Foundation
import StaffcastCore
import StaffcastPostgres

/// Team and zone routes (docs/protocol.md, Audiences), each run as the caller under row-level
/// security on a database worker.
extension HTTPAPI {
    func teams(_ route: HTTPRoute, _ request: HTTPRequest, bearer token: String?, _ respond: @escaping Respond) {
        let head = request.head
        switch route {
        case .createTeam(let eventID):
            guard let made: (name: String, kind: Team.Kind) = decoded(respond, try TeamRequest.decode(request.body)) else { return }
            runAsUser(token, respond) { store, identity in
                .json(201, try store.createTeam(as: identity.userID, event: eventID, name: made.name, kind: made.kind))
            }
        case .listTeams(let eventID):
            listAsUser("teams", token, respond) { try $0.teams(as: $1, event: eventID) }
        case .deleteTeam(let eventID, let name):
            deleteAsUser(name, token, respond) { try $0.deleteTeam(as: $1, event: eventID, name: name) }
        case .teamMembers(let eventID, let name):
            listAsUser("members", token, respond) { try $0.teamMembers(as: $1, event: eventID, team: name) }
        case .teamMember(let eventID, let name, let userID):
            let adding = head.method == "PUT"
            runAsUser(token, respond) { store, identity in
                if adding {
                    let added = try store.addTeamMember(as: identity.userID, event: eventID, team: name, member: userID)
                    return .json(added ? 201 : 200, TeamMembership(team: name, userID: userID, member: true))
                }
                try store.removeTeamMember(as: identity.userID, event: eventID, team: name, member: userID)
                return .json(200, TeamMembership(team: name, userID: userID, member: false))
            }
        case .zoneCheckin(let eventID, let name):
            runAsUser(token, respond) { store, identity in
                let zone = try store.checkIn(as: identity.userID, event: eventID, zone: name)
                return .json(200, CheckedIn(zone: zone.name, eventID: eventID, userID: identity.userID))
            }
        case .answers(let messageID) where head.method == "POST":
            guard let option: Int = decoded(respond, try PollAnswerRequest.decode(request.body)) else { return }
            guard acceptsRequests(respond) else { return }
            guard let identity = caller(token, respond) else { return }
            if let refusal = replyLimits.refusal(for: identity.userID) {
                var response = HTTPResponse.error(refusal)
                response.headers.append((name: "retry-after", value: "\(replyLimits.retryAfterSeconds)"))
                respond(response)
                return
            }
            let limits = replyLimits
            let accepted = answers.submit(user: identity.userID, message: messageID, option: option) { result in
                switch result {
                case .success: respond(.json(201, Answered(messageID: messageID, option: option)))
                case .failure(let e):
                    limits.giveBack(for: identity.userID, after: e)
                    respond(.error(e))
                }
            }
            if !accepted {
                replyLimits.giveBack(for: identity.userID)
                respond(.error(.unavailable("The server is overloaded right now; your answer was not stored. Try again in a moment.")))
            }
        case .answers(let messageID):
            let csv = CSVReports.wanted(head)
            runAsUser(token, respond) { store, identity in
                let report = try store.pollAnswers(as: identity.userID, message: messageID)
                return csv ? CSVReports.answers(report) : .json(200, report)
            }
        case .audit(let eventID):
            let csv = CSVReports.wanted(head)
            let limit: Int
            do {
                limit = Int(try HTTPBodies.intParameter(head.query, "limit", range: 1...100_000) ?? 1_000)
            } catch {
                respond(.error(error))
                return
            }
            runAsUser(token, respond) { store, identity in
                // One more than asked: whether the log goes on past what is shown.
                var entries = try store.eventAudit(as: identity.userID, event: eventID, limit: limit + 1)
                let more = entries.count > limit
                if more { entries.removeLast(entries.count - limit) }
                var answer = csv ? CSVReports.audit(entries, eventID: eventID) : .json(200, AuditBody(entries: entries, more: more))
                answer.headers.append((name: "x-more-entries", value: more ? "true" : "false"))
                return answer
            }
        default:
            respond(.error(.notFound("There is no such route.")))
        }
    }
}

/// The answer to adding or removing a member.
struct TeamMembership: Encodable {
    var team: String
    var userID: UUID
    var member: Bool
    enum CodingKeys: String, CodingKey { case team, member, userID = "user_id" }
    func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(team, forKey: .team)
        try c.encode(userID.wireText, forKey: .userID)
        try c.encode(member, forKey: .member)
    }
}

/// The answer to `POST /v1/messages/{id}/answers`.
struct Answered: Encodable {
    var messageID: UUID
    var option: Int
    enum CodingKeys: String, CodingKey { case option, messageID = "message_id" }
    func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(messageID.wireText, forKey: .messageID)
        try c.encode(option, forKey: .option)
    }
}

/// The answer to a zone check-in.
struct CheckedIn: Encodable {
    var zone: String
    var eventID: UUID
    var userID: UUID
    enum CodingKeys: String, CodingKey { case zone, eventID = "event_id", userID = "user_id" }
    func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(zone, forKey: .zone)
        try c.encode(eventID.wireText, forKey: .eventID)
        try c.encode(userID.wireText, forKey: .userID)
    }
}
