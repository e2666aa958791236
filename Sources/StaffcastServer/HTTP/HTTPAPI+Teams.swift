import Foundation
import StaffcastCore
import StaffcastPostgres

/// Team and zone routes (docs/protocol.md, Audiences), each run as the caller under row-level
/// security on a database worker.
extension HTTPAPI {
    func teams(_ route: HTTPRoute, _ request: HTTPRequest, _ respond: @escaping Respond) {
        let head = request.head
        let token = head.bearerToken
        switch route {
        case .createTeam(let eventID):
            let made: (name: String, kind: Team.Kind)
            do {
                made = try Self.teamRequest(request.body)
            } catch {
                respond(.error(error))
                return
            }
            runAsUser(token, respond) { store, identity in
                .json(201, try store.createTeam(as: identity.userID, event: eventID, name: made.name, kind: made.kind))
            }
        case .listTeams(let eventID):
            runAsUser(token, respond) { store, identity in
                .json(200, ["teams": try store.teams(as: identity.userID, event: eventID)])
            }
        case .deleteTeam(let eventID, let name):
            runAsUser(token, respond) { store, identity in
                try store.deleteTeam(as: identity.userID, event: eventID, name: name)
                return .json(200, ["deleted": name])
            }
        case .teamMembers(let eventID, let name):
            runAsUser(token, respond) { store, identity in
                .json(200, ["members": try store.teamMembers(as: identity.userID, event: eventID, team: name)])
            }
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
        default:
            respond(.error(.notFound("There is no such route.")))
        }
    }

    /// `{"name", "kind"?: "team" | "zone"}`.
    static func teamRequest(_ body: [UInt8]) throws(StaffcastError) -> (name: String, kind: Team.Kind) {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(body), options: [])) as? [String: Any] else {
            throw .invalid("The body must be a JSON object {\"name\": \"…\", \"kind\": \"team\" or \"zone\"}.")
        }
        let fields = JSONFields(object)
        guard let name = try fields.string("name") else { throw .invalid("The JSON body needs a \"name\".") }
        try Team.validateName(name)
        var kind = Team.Kind.team
        if let raw = try fields.string("kind") {
            guard let k = Team.Kind(rawValue: raw) else { throw .invalid("kind must be \"team\" or \"zone\"; got '\(raw.prefix(20))'.") }
            kind = k
        }
        return (name, kind)
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
        try c.encode(userID.uuidString.lowercased(), forKey: .userID)
        try c.encode(member, forKey: .member)
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
        try c.encode(eventID.uuidString.lowercased(), forKey: .eventID)
        try c.encode(userID.uuidString.lowercased(), forKey: .userID)
    }
}
