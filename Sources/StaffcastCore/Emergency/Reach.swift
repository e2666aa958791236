import Foundation

/// Who of an event's roster a message reaches live: `GET /v1/events/{id}/reach`. Pure: built
/// from the roster, the set of users connected (subscribed to the event) on any server, and
/// when each was last seen.
public struct Reach: Sendable, Equatable, Codable {
    public struct Person: Sendable, Equatable, Codable {
        public var userID: UUID
        public var displayName: String
        /// When they were last connected to the event (offline people only); nil: never seen.
        public var lastSeen: Date?

        public init(userID: UUID, displayName: String, lastSeen: Date? = nil) {
            self.userID = userID
            self.displayName = displayName
            self.lastSeen = lastSeen
        }

        enum CodingKeys: String, CodingKey { case userID = "user_id", displayName = "display_name", lastSeen = "last_seen" }

        public init(from decoder: Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            userID = try c.decode(UUID.self, forKey: .userID)
            displayName = try c.decode(String.self, forKey: .displayName)
            lastSeen = try c.decodeIfPresent(String.self, forKey: .lastSeen).flatMap(RFC3339.parse)
        }

        public func encode(to encoder: Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(userID.wireText, forKey: .userID)
            try c.encode(displayName, forKey: .displayName)
            try c.encode(lastSeen.map(RFC3339.format), forKey: .lastSeen)
        }
    }

    /// One zone of the event: how many have checked in there, and how many of them are connected.
    public struct Zone: Sendable, Equatable, Codable {
        public var name: String
        public var members: Int
        public var connected: Int
    }

    @WireUUID public var eventID: UUID
    /// Everyone with access to the event.
    public var roster: Int
    /// Of them, those with a live WebSocket subscribed to the event on any server.
    public var connected: Int
    /// Those not connected, longest gone first (never seen first of all), then by name.
    public var offline: [Person]
    /// Those connected (an extension of the contract's shape: lets a sender leave themself out).
    @WireDefault public var online: [Person]
    /// The event's zones by name, with live staff in each.
    @WireDefault public var zones: [Zone]

    enum CodingKeys: String, CodingKey { case eventID = "event_id", roster, connected, offline, online, zones }

    public init(eventID: UUID, roster: Int, connected: Int, offline: [Person], online: [Person], zones: [Zone] = []) {
        self.zones = zones
        self.eventID = eventID
        self.roster = roster
        self.connected = connected
        self.offline = offline
        self.online = online
    }

    /// `roster`: every user with access and their name; `connected`: users with a live
    /// subscription to the event anywhere; `lastSeen`: when each was last connected;
    /// `zones`: each zone's members, by zone name.
    public static func compute(eventID: UUID, roster: [(userID: UUID, displayName: String)], connected: Set<UUID>,
                               lastSeen: [UUID: Date], zones: [(name: String, members: [UUID])] = []) -> Reach {
        var online: [Person] = []
        var offline: [Person] = []
        for member in roster {
            if connected.contains(member.userID) {
                online.append(Person(userID: member.userID, displayName: member.displayName))
            } else {
                offline.append(Person(userID: member.userID, displayName: member.displayName, lastSeen: lastSeen[member.userID]))
            }
        }
        offline.sort { a, b in
            switch (a.lastSeen, b.lastSeen) {
            case (nil, nil): return a.displayName < b.displayName
            case (nil, _): return true
            case (_, nil): return false
            case let (x?, y?): return x == y ? a.displayName < b.displayName : x < y
            }
        }
        online.sort { $0.displayName < $1.displayName }
        let zoneCounts = zones.map { zone in
            Zone(name: zone.name, members: zone.members.count, connected: zone.members.filter(connected.contains).count)
        }.sorted { $0.name < $1.name }
        return Reach(eventID: eventID, roster: roster.count, connected: online.count, offline: offline, online: online,
                     zones: zoneCounts)
    }

    /// The line `staffcast send` prints: "delivered live to 37 of 40 recipients; not connected:
    /// Sam (gate 3), Ana, Li". Recipients are the people a message is for except its sender, the
    /// one way every surface counts a message's audience (at most `maxNames` names, then "and N more").
    public func deliveryLine(excluding sender: UUID?, maxNames: Int = 10) -> String {
        let others = offline.filter { $0.userID != sender }
        let live = online.filter { $0.userID != sender }.count
        let total = others.count + live
        var line = "delivered live to \(live) of \(total) recipients"
        if !others.isEmpty {
            let names = others.prefix(maxNames).map(\.displayName)
            line += "; not connected: " + names.joined(separator: ", ")
            if others.count > maxNames { line += " and \(others.count - maxNames) more" }
        }
        return line
    }
}
