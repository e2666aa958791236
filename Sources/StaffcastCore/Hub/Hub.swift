import Foundation

/// Who is connected, who is subscribed to which event, and what each subscriber has been given.
///
/// One channel per event. The hub decides *who* gets a frame; it never encodes or writes: the
/// caller encodes a live message once and hands the same `Frame` to every connection the hub
/// names. Pure and single-threaded: the server's service thread owns the only instance.
public struct Hub<Frame> {
    public typealias ConnectionID = Int

    /// A subscriber has been given every message of the channel with seq ≤ `through`, and
    /// every edit or retract with change seq ≤ `changesThrough` (from its snapshot or its
    /// catch-up), so a change the listener hands on late is not given a second time.
    struct Subscription {
        var through: Int64
        var changesThrough: Int64
    }

    public enum SubscribeOutcome {
        /// Subscribed; send these live frames right after the `subscribed` reply.
        case subscribed(catchUp: [Frame])
        /// Messages were published in between that the recent window no longer holds; the
        /// client should subscribe again with `since_seq`.
        case lagged
    }

    private var channels: [UUID: [ConnectionID: Subscription]] = [:]
    private var users: [ConnectionID: UUID] = [:]
    private var connectionsOfUser: [UUID: Set<ConnectionID>] = [:]
    private var eventsOfConnection: [ConnectionID: Set<UUID>] = [:]
    private var recent: RecentMessages<Frame>
    /// Highest seq handed to `publish`; messages arrive in seq order.
    public private(set) var publishedThrough: Int64
    /// The last edits and retracts handed on (`message_updated`, `message_retracted`), by their
    /// `message_changes` seq: a subscribe whose snapshot predates one that was fanned out before
    /// the connection joined the channel gets it from here, as it gets missed messages from
    /// `recent` (a phone reconnecting while "hall B" was corrected to "hall C" kept "hall B").
    private var recentChanges: RecentMessages<Frame>
    /// Highest change seq handed to `recordChange`; changes arrive in seq order.
    public private(set) var changedThrough: Int64

    public init(publishedThrough: Int64, changedThrough: Int64 = 0, recentCapacity: Int = 4_096) {
        self.publishedThrough = publishedThrough
        self.recent = RecentMessages(capacity: recentCapacity, startingAfter: publishedThrough)
        self.changedThrough = changedThrough
        self.recentChanges = RecentMessages(capacity: recentCapacity, startingAfter: changedThrough)
    }

    // MARK: connections

    public mutating func connect(_ id: ConnectionID, user: UUID) {
        users[id] = user
        connectionsOfUser[user, default: []].insert(id)
    }

    public mutating func disconnect(_ id: ConnectionID) {
        for event in eventsOfConnection.removeValue(forKey: id) ?? [] {
            removeSubscription(id, event)
        }
        if let user = users.removeValue(forKey: id) {
            connectionsOfUser[user]?.remove(id)
            if connectionsOfUser[user]?.isEmpty == true { connectionsOfUser[user] = nil }
        }
    }

    public func connections(ofUser user: UUID) -> Set<ConnectionID> { connectionsOfUser[user] ?? [] }
    public var connectionCount: Int { users.count }

    // MARK: subscriptions

    /// Adds `id` to `eventID`'s channel. `historyThrough` and `changesThrough` are the highest
    /// message and message-change seq the database snapshot behind the `subscribed` reply could
    /// see; what was handed on since comes back as `catchUp`: the messages first, then the edits
    /// and retracts (an edit of a caught-up message must follow the message).
    public mutating func subscribe(_ id: ConnectionID, to eventID: UUID, historyThrough: Int64, changesThrough: Int64,
                                   now: Date) -> SubscribeOutcome {
        guard users[id] != nil else { return .subscribed(catchUp: []) }
        var catchUp: [Frame] = []
        if historyThrough < publishedThrough {
            guard let missed = recent.frames(of: eventID, after: historyThrough, for: users[id], now: now) else { return .lagged }
            catchUp = missed
        }
        if changesThrough < changedThrough {
            guard let changed = recentChanges.frames(of: eventID, after: changesThrough, for: users[id], now: now) else {
                return .lagged
            }
            catchUp += changed
        }
        channels[eventID, default: [:]][id] = Subscription(through: max(historyThrough, publishedThrough),
                                                           changesThrough: max(changesThrough, changedThrough))
        eventsOfConnection[id, default: []].insert(eventID)
        return .subscribed(catchUp: catchUp)
    }

    @discardableResult
    public mutating func unsubscribe(_ id: ConnectionID, from eventID: UUID) -> Bool {
        guard eventsOfConnection[id]?.remove(eventID) != nil else { return false }
        removeSubscription(id, eventID)
        return true
    }

    public func isSubscribed(_ id: ConnectionID, to eventID: UUID) -> Bool {
        channels[eventID]?[id] != nil
    }

    /// The events a connection is subscribed to.
    public func events(of id: ConnectionID) -> Set<UUID> { eventsOfConnection[id] ?? [] }

    public func subscriberCount(of eventID: UUID) -> Int { channels[eventID]?.count ?? 0 }
    /// Every connection subscribed to `eventID`.
    public func subscribers(of eventID: UUID) -> [ConnectionID] { channels[eventID].map { Array($0.keys) } ?? [] }

    /// The subscribers of `eventID` that must get the edit or retract with change seq `seq`:
    /// those whose snapshot or catch-up did not already carry it. A frame without a change seq
    /// (a reply) goes to every subscriber.
    public func subscribers(of eventID: UUID, forChange seq: Int64?) -> [ConnectionID] {
        guard let subscribers = channels[eventID] else { return [] }
        guard let seq else { return Array(subscribers.keys) }
        return subscribers.compactMap { seq > $0.value.changesThrough ? $0.key : nil }
    }

    /// Subscriber counts per event, for status pages.
    public var subscriberCounts: [UUID: Int] { channels.mapValues(\.count) }

    private mutating func removeSubscription(_ id: ConnectionID, _ eventID: UUID) {
        channels[eventID]?[id] = nil
        if channels[eventID]?.isEmpty == true { channels[eventID] = nil }
    }

    // MARK: fan-out

    /// Records a committed message and returns the connections that must get `frame`.
    /// A message at or below `publishedThrough` was already published and goes to nobody.
    /// With an `audience` (a message to teams) only those users' subscribed connections get
    /// it, found through each user's connections: the cost follows the audience, not the
    /// number of subscribers of the event.
    public mutating func publish(seq: Int64, eventID: UUID, expiresAt: Date?, frame: Frame,
                                 audience: Set<UUID>? = nil) -> [ConnectionID] {
        guard seq > publishedThrough else { return [] }
        publishedThrough = seq
        recent.append(.init(seq: seq, eventID: eventID, expiresAt: expiresAt, frame: frame, audience: audience))
        guard let subscribers = channels[eventID] else { return [] }
        if let audience {
            var out: [ConnectionID] = []
            for user in audience {
                for id in connectionsOfUser[user] ?? [] {
                    if let sub = subscribers[id], seq > sub.through { out.append(id) }
                }
            }
            return out.sorted()
        }
        var out: [ConnectionID] = []
        out.reserveCapacity(subscribers.count)
        for (id, sub) in subscribers where seq > sub.through {
            out.append(id)
        }
        return out
    }

    /// Remembers an edit or retract handed on to `eventID`'s subscribers (`audience`: the
    /// targeted message's audience, nil for everyone), for subscribes lined up later. A change
    /// at or below `changedThrough` was recorded already.
    public mutating func recordChange(seq: Int64, eventID: UUID, frame: Frame, audience: Set<UUID>?) {
        guard seq > changedThrough else { return }
        changedThrough = seq
        recentChanges.append(.init(seq: seq, eventID: eventID, expiresAt: nil, frame: frame, audience: audience))
    }

    /// Ends every subscription of `user` on `eventID`; returns the connections that lost one.
    public mutating func revoke(user: UUID, from eventID: UUID) -> [ConnectionID] {
        var out: [ConnectionID] = []
        for id in connectionsOfUser[user] ?? [] where eventsOfConnection[id]?.contains(eventID) == true {
            eventsOfConnection[id]?.remove(eventID)
            removeSubscription(id, eventID)
            out.append(id)
        }
        return out.sorted()
    }
}
