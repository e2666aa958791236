import Foundation

/// An event as one user sees it: its name and the user's level on it.
public struct EventSummary: Sendable, Equatable, Codable {
    public var id: UUID
    public var name: String
    public var startsAt: Date?
    public var accessLevel: AccessLevel

    public init(id: UUID, name: String, startsAt: Date?, accessLevel: AccessLevel) {
        self.id = id
        self.name = name
        self.startsAt = startsAt
        self.accessLevel = accessLevel
    }

    enum CodingKeys: String, CodingKey {
        case id = "event_id", name, startsAt = "starts_at", accessLevel = "access_level"
    }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(UUID.self, forKey: .id)
        name = try c.decode(String.self, forKey: .name)
        startsAt = try c.decodeRFC3339IfPresent(forKey: .startsAt)
        accessLevel = try c.decode(AccessLevel.self, forKey: .accessLevel)
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id.wireText, forKey: .id)
        try c.encode(name, forKey: .name)
        try c.encode(startsAt.map(RFC3339.format), forKey: .startsAt)
        try c.encode(accessLevel, forKey: .accessLevel)
    }
}
