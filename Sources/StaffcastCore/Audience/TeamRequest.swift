import Foundation

/// The body of `POST /v1/events/{id}/teams`: `{"name", "kind"?: "team" | "zone"}`. The server
/// decodes it and `APIClient.createTeam` encodes it.
public struct TeamRequest: Sendable, Equatable, Codable {
    public var name: String?
    public var kind: String?

    public init(name: String, kind: Team.Kind) {
        self.name = name
        self.kind = kind.rawValue
    }

    public init(from decoder: Decoder) throws {
        let f = try WireFields(decoder)
        try f.refuseUnknown(KnownFields(["name", "kind"]), in: "A team")
        name = try f.string("name")
        kind = try f.string("kind")
    }

    public static func decode(_ body: [UInt8]) throws(StaffcastError) -> (name: String, kind: Team.Kind) {
        let r = try WireJSON.decode(TeamRequest.self, from: body,
                                    notAnObject: "The body must be a JSON object {\"name\": \"…\", \"kind\": \"team\" or \"zone\"}.")
        guard let raw = r.name else { throw .invalid("The JSON body needs a \"name\".") }
        let name = try TeamName.validatedNew(raw)
        var kind = Team.Kind.team
        if let raw = r.kind {
            guard let k = Team.Kind(rawValue: raw) else { throw .invalid("kind must be \"team\" or \"zone\"; got '\(raw.prefix(20))'.") }
            kind = k
        }
        return (name, kind)
    }
}
