import Foundation

/// A validated request to create an invite (`POST /v1/events/{event_id}/invites`,
/// `staffcast admin invite create`): the level it grants, how long it works, how many may use it.
public struct InviteRequest: Sendable, Equatable {
    public static let defaultExpiresInMinutes = 60
    public static let expiresInMinutes = 1...10_080 // a week
    public static let maxUsesRange = 1...10_000

    public var eventID: UUID
    public var accessLevel: AccessLevel
    public var expiresInMinutes: Int
    public var maxUses: Int

    public init(eventID: UUID, accessLevel: AccessLevel = .staff, expiresInMinutes: Int = InviteRequest.defaultExpiresInMinutes,
                maxUses: Int = 1) throws(StaffcastError) {
        guard Self.expiresInMinutes.contains(expiresInMinutes) else {
            throw .invalid("expires_in_minutes must be 1 to 10080 (a week); it was \(expiresInMinutes).")
        }
        guard Self.maxUsesRange.contains(maxUses) else {
            throw .invalid("max_uses must be 1 to 10000; it was \(maxUses).")
        }
        self.eventID = eventID
        self.accessLevel = accessLevel
        self.expiresInMinutes = expiresInMinutes
        self.maxUses = maxUses
    }

    /// From a JSON body `{"access_level"?, "expires_in_minutes"?, "max_uses"?}` (an empty body
    /// takes every default).
    public static func decode(eventID: UUID, body: [UInt8]) throws(StaffcastError) -> InviteRequest {
        var fields = Body()
        if !body.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) {
            fields = try WireJSON.decode(Body.self, from: body, notAnObject:
                "The body must be a JSON object such as {\"access_level\":\"staff\",\"expires_in_minutes\":60,\"max_uses\":50}.")
        }
        var level = AccessLevel.staff
        if let text = fields.accessLevel {
            guard let l = AccessLevel(rawValue: text) else { throw .invalid("access_level must be staff, admin or owner.") }
            level = l
        }
        return try InviteRequest(eventID: eventID, accessLevel: level,
                                 expiresInMinutes: fields.expiresInMinutes.map { Int(clamping: $0) } ?? defaultExpiresInMinutes,
                                 maxUses: fields.maxUses.map { Int(clamping: $0) } ?? 1)
    }

    /// The body as sent (`staffcast admin invite create` and the console encode it).
    public struct Body: Sendable, Equatable, Codable {
        public var accessLevel: String?
        public var expiresInMinutes: Int64?
        public var maxUses: Int64?

        public init(accessLevel: AccessLevel? = nil, expiresInMinutes: Int? = nil, maxUses: Int? = nil) {
            self.accessLevel = accessLevel?.rawValue
            self.expiresInMinutes = expiresInMinutes.map(Int64.init)
            self.maxUses = maxUses.map(Int64.init)
        }

        enum CodingKeys: String, CodingKey {
            case accessLevel = "access_level", expiresInMinutes = "expires_in_minutes", maxUses = "max_uses"
        }

        public init(from decoder: Decoder) throws {
            let f = try WireFields(decoder)
            // {"max_use": 300} made a single-use invite: a mistyped field is named instead.
            try f.refuseUnknown(KnownFields(["access_level", "expires_in_minutes", "max_uses"]), in: "An invite")
            accessLevel = try f.string("access_level")
            expiresInMinutes = try f.int64("expires_in_minutes", min: Int64(Int32.min))
            maxUses = try f.int64("max_uses", min: Int64(Int32.min))
        }
    }
}

/// An invite as the API shows it to its creator (the code only then, once).
public struct Invite: Sendable, Equatable, Codable {
    public var code: String
    public var url: String
    @WireUUID public var eventID: UUID
    public var accessLevel: AccessLevel
    @WireDate public var expiresAt: Date
    public var maxUses: Int
    public var uses: Int

    public init(code: String, url: String, eventID: UUID, accessLevel: AccessLevel, expiresAt: Date, maxUses: Int, uses: Int) {
        self.code = code
        self.url = url
        self.eventID = eventID
        self.accessLevel = accessLevel
        self.expiresAt = expiresAt
        self.maxUses = maxUses
        self.uses = uses
    }

    enum CodingKeys: String, CodingKey {
        case code, url, uses, eventID = "event_id", accessLevel = "access_level", expiresAt = "expires_at", maxUses = "max_uses"
    }
}

/// What redeeming an invite gives: a new user with a level on the event, and their token.
public struct Redemption: Sendable, Equatable, Codable {
    @WireUUID public var userID: UUID
    public var token: String
    @WireUUID public var eventID: UUID
    public var accessLevel: AccessLevel

    public init(userID: UUID, token: String, eventID: UUID, accessLevel: AccessLevel) {
        self.userID = userID
        self.token = token
        self.eventID = eventID
        self.accessLevel = accessLevel
    }

    enum CodingKeys: String, CodingKey { case token, userID = "user_id", eventID = "event_id", accessLevel = "access_level" }
}
