import Foundation

/// A named subset of an event's people (docs/protocol.md, Audiences): a `team` that organisers
/// fill, or a `zone` that people join themselves by checking in at their post (one zone per
/// person per event at a time).
public struct Team: Sendable, Equatable, Codable {
    public enum Kind: String, Sendable, Codable, CaseIterable {
        case team, zone
    }

    public var name: String
    @WireUUID public var eventID: UUID
    public var kind: Kind
    /// How many people are in it now.
    public var members: Int

    public init(name: String, eventID: UUID, kind: Kind, members: Int) {
        self.name = name
        self.eventID = eventID
        self.kind = kind
        self.members = members
    }

    enum CodingKeys: String, CodingKey { case name, kind, members, eventID = "event_id" }

    /// 1 to 100 bytes, one line, no control characters and no `/` (it names the team in a URL
    /// path) and no `,` (the CLI and `reach?teams=` take comma-separated lists).
    public static func validateName(_ name: String) throws(StaffcastError) {
        try TextRules.requireName(name, of: "team", without: ["/", ","])
    }
}

/// One member of a team: `{"user_id","display_name"}`.
public struct TeamMember: Sendable, Equatable, Codable {
    @WireUUID public var userID: UUID
    public var displayName: String

    public init(userID: UUID, displayName: String) {
        self.userID = userID
        self.displayName = displayName
    }

    enum CodingKeys: String, CodingKey { case userID = "user_id", displayName = "display_name" }
}
