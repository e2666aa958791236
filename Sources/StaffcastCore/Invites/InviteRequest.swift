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
        let object: [String: Any]
        if body.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) {
            object = [:]
        } else {
            guard let parsed = try? JSONSerialization.jsonObject(with: Data(body)), let o = parsed as? [String: Any] else {
                throw .invalid("The body must be a JSON object such as {\"access_level\":\"staff\",\"expires_in_minutes\":60,\"max_uses\":50}.")
            }
            object = o
        }
        let fields = JSONFields(object)
        var level = AccessLevel.staff
        if let text = try fields.string("access_level") {
            guard let l = AccessLevel(rawValue: text) else { throw .invalid("access_level must be staff, admin or owner.") }
            level = l
        }
        func int(_ key: String, _ fallback: Int) throws(StaffcastError) -> Int {
            guard let n = try fields.int64(key, min: Int64(Int32.min)) else { return fallback }
            return Int(clamping: n)
        }
        return try InviteRequest(eventID: eventID, accessLevel: level,
                                 expiresInMinutes: try int("expires_in_minutes", defaultExpiresInMinutes),
                                 maxUses: try int("max_uses", 1))
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

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(userID.uuidString.lowercased(), forKey: .userID)
        try c.encode(token, forKey: .token)
        try c.encode(eventID.uuidString.lowercased(), forKey: .eventID)
        try c.encode(accessLevel, forKey: .accessLevel)
    }
}
