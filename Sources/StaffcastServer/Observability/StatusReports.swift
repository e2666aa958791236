import Foundation
import StaffcastCore
import StaffcastPostgres

/// The bodies of `/v1/status`, `/v1/events/{id}/status`, `/v1/events/{id}/reach` and
/// `/metrics`, built from the loops' snapshots (`LoopDirectory.collect`), what the database
/// knows, and the server's health. Holds only what it reads; called on whichever thread
/// completed the collection (never a database call here: the facts are passed in).
struct StatusReports: Sendable {
    let configuration: ServerConfiguration
    let health: ServerHealth
    let workers: DatabaseWorkers
    let gatekeeper: Gatekeeper
    let metrics: ServerMetrics

    struct StatusSnapshot: Encodable, Sendable {
        struct EventStatus: Encodable, Sendable {
            let event_id: String
            let name: String?
            let subscribers: Int
            let roster: Int?
            let last_message_seq: Int64?
            let last_message_at: String?
        }
        let node: String
        let version: String
        let uptime_seconds: Int
        let state: String
        let connections: Int
        let subscriptions: Int
        let events: [EventStatus]
        let database: String
        let database_latency_ms: Double
        let listener: String
        // Server-wide figures: for the ops token only (nil, so left out, for an event owner).
        let queued_database_jobs: Int?
        let slow_clients_closed: Int?
        let heartbeat_timeouts: Int?
        let messages_fanned_out: Int?
        let loops: [LoopStatus]?
    }

    struct LoopStatus: Encodable, Sendable {
        let index: Int
        let connections: Int
        let http_connections: Int
        let subscriptions: Int
        let inbox: Int
        let frames_delivered: Int
    }

    /// `serverWide` false (an event owner): `loops` are already restricted to their events,
    /// `connections` counts only connections subscribed to them, and the server-wide counters
    /// are left out.
    /// `listing`: events to list even with no subscriber here (an owner's own events).
    func statusSnapshot(_ loops: [LoopSnapshot], facts: [Store.EventFacts], databaseLatency: TimeInterval,
                        serverWide: Bool = true, listing: Set<UUID> = []) -> StatusSnapshot {
        var counts: [UUID: Int] = [:]
        for loop in loops { counts.merge(loop.subscribers, uniquingKeysWith: +) }
        for id in listing where counts[id] == nil { counts[id] = 0 }
        let stats = loops.map(\.stats).reduce(EngineStats(), +)
        let byID = Dictionary(facts.map { ($0.eventID, $0) }, uniquingKeysWith: { a, _ in a })
        let r = health.readiness
        return StatusSnapshot(
            node: configuration.nodeID, version: StaffcastVersion.current,
            uptime_seconds: Int(Date().timeIntervalSince(health.startedAt)), state: health.state.rawValue,
            connections: serverWide ? loops.map(\.connections).reduce(0, +) : Set(loops.flatMap { $0.members.map(\.connectionID) }).count,
            subscriptions: counts.values.reduce(0, +),
            events: counts.sorted { $0.key.uuidString < $1.key.uuidString }.map { id, n in
                let f = byID[id]
                return StatusSnapshot.EventStatus(event_id: id.wireText, name: f?.name, subscribers: n,
                                                  roster: f?.roster, last_message_seq: f?.lastMessageSeq,
                                                  last_message_at: f?.lastMessageAt.map(RFC3339.format))
            },
            database: r.database, database_latency_ms: (databaseLatency * 100_000).rounded() / 100, listener: r.listener,
            queued_database_jobs: serverWide ? workers.queued : nil,
            slow_clients_closed: serverWide ? stats.slowClientsClosed + stats.stalledClientsDropped : nil,
            heartbeat_timeouts: serverWide ? stats.heartbeatTimeouts : nil,
            messages_fanned_out: serverWide ? loops.map(\.stats.messagesFannedOut).max() ?? 0 : nil,
            loops: !serverWide ? nil : loops.map { LoopStatus(index: $0.index, connections: $0.connections, http_connections: $0.httpConnections,
                                          subscriptions: $0.subscribers.values.reduce(0, +), inbox: $0.inboxDepth,
                                          frames_delivered: $0.stats.framesDelivered) })
    }

    struct EventStatusBody: Encodable, Sendable {
        struct Member: Encodable, Sendable {
            let user_id: String
            let display_name: String
            let access_level: String
            let connected: Bool
            let connected_since: String?
            let connections: Int
            /// The servers the member is connected to.
            let nodes: [String]
            let rtt_ms: Double?
            let reconnects_last_hour: Int
            let unread_count: Int
            let last_read_seq: Int64?
            let last_read_message_at: String?
        }
        let event_id: String
        let node: String
        let subscribers: Int
        let roster: Int
        let staff: [Member]
        // With ?limit= only (nil, so left out, in the whole roster's answer): counts of everyone,
        // and how many people come after this page.
        var connected: Int?
        var not_connected: Int?
        var limit: Int?
        var offset: Int?
        var left_out: Int?
    }

    /// Who is connected to an event, from this server's own connections (live) and what the
    /// other servers last wrote to the presence table (at most a few seconds old).
    struct Connections {
        let local: [UUID: [LoopSnapshot.Member]]
        let remote: [UUID: [Store.PresenceRow]]
        let subscribers: Int

        init(_ eventID: UUID, loops: [LoopSnapshot], elsewhere: [Store.PresenceRow]) {
            remote = Dictionary(grouping: elsewhere, by: \.userID)
            local = Dictionary(grouping: loops.flatMap(\.members).filter { $0.eventID == eventID }, by: \.userID)
            subscribers = loops.map { $0.subscribers[eventID] ?? 0 }.reduce(0, +) + elsewhere.count
        }

        func isConnected(_ user: UUID) -> Bool { local[user] != nil || remote[user] != nil }
    }

    /// Who of an event's roster is connected (`Connections`), plus what the database knows
    /// (unread, last read).
    func eventStatus(_ eventID: UUID, loops: [LoopSnapshot], roster: [Store.RosterEntry], elsewhere: [Store.PresenceRow]) -> EventStatusBody {
        let connections = Connections(eventID, loops: loops, elsewhere: elsewhere)
        return EventStatusBody(event_id: eventID.wireText, node: configuration.nodeID,
                               subscribers: connections.subscribers, roster: roster.count,
                               staff: roster.map { member($0, connections) })
    }

    /// `?limit=`: which people of the roster the page holds (`RosterPage`, the console's order).
    func rosterSelection(_ page: RosterPage, members: [Store.RosterMember], connections: Connections) -> RosterPage.Selection {
        page.select(members.map { RosterPage.Person(userID: $0.userID, displayName: $0.displayName,
                                                    connected: connections.isConnected($0.userID)) })
    }

    /// `?limit=`: the page's people (their `entries`, in the selection's order) and the counts of everyone.
    func eventStatus(_ eventID: UUID, page: RosterPage, selection: RosterPage.Selection, entries: [Store.RosterEntry],
                     connections: Connections) -> EventStatusBody {
        let byID = Dictionary(entries.map { ($0.userID, $0) }, uniquingKeysWith: { a, _ in a })
        // Someone who lost access between the two queries is left out of the page.
        let staff = selection.people.compactMap { byID[$0.userID].map { member($0, connections) } }
        var body = EventStatusBody(event_id: eventID.wireText, node: configuration.nodeID,
                                   subscribers: connections.subscribers, roster: selection.roster, staff: staff)
        body.connected = selection.connected
        body.not_connected = selection.notConnected
        body.limit = page.limit
        body.offset = page.offset
        body.left_out = selection.leftOut
        return body
    }

    private func member(_ entry: Store.RosterEntry, _ connections: Connections) -> EventStatusBody.Member {
        let live = connections.local[entry.userID] ?? []
        let others = connections.remote[entry.userID] ?? []
        let since = (live.map(\.connectedSince) + others.map(\.connectedSince)).min()
        let rtts = live.compactMap { $0.rtt.map { ($0 * 100_000).rounded() / 100 } } + others.compactMap(\.rttMs)
        let opens = gatekeeper.opensLastHour(of: entry.userID)
        return EventStatusBody.Member(
            user_id: entry.userID.wireText, display_name: entry.displayName,
            access_level: entry.level.rawValue, connected: !live.isEmpty || !others.isEmpty,
            connected_since: since.map(RFC3339.format), connections: live.count + others.count,
            nodes: Array(Set((live.isEmpty ? [] : [configuration.nodeID]) + others.map(\.node))).sorted(),
            rtt_ms: rtts.min(), reconnects_last_hour: max(0, opens - 1), unread_count: entry.unreadCount,
            last_read_seq: entry.lastReadSeq, last_read_message_at: entry.lastReadSentAt.map(RFC3339.format))
    }

    /// Who of an event's roster is connected right now: on this server (the loops, live) or
    /// on another (the presence table, a few seconds old).
    func reach(_ eventID: UUID, facts: Store.ReachFacts, loops: [LoopSnapshot]) -> Reach {
        let here = Set(loops.flatMap(\.members).filter { $0.eventID == eventID }.map(\.userID))
        return Reach.compute(eventID: eventID, roster: facts.roster, connected: here.union(facts.connectedElsewhere),
                             lastSeen: facts.lastSeen, zones: facts.zones)
    }

    func metricsText(_ loops: [LoopSnapshot]) -> String {
        metrics.gauge("staffcast_connections", Double(loops.map(\.connections).reduce(0, +)))
        metrics.gauge("staffcast_subscriptions", Double(loops.map { $0.subscribers.values.reduce(0, +) }.reduce(0, +)))
        metrics.gauge("staffcast_database_jobs_queued", Double(workers.queued))
        metrics.gauge("staffcast_listener_up", health.listenerState == .listening ? 1 : 0)
        metrics.gauge("staffcast_database_workers", Double(configuration.databaseWorkers))
        metrics.gauge("staffcast_service_loops", Double(loops.count))
        metrics.gauge("staffcast_valid_tokens", Double(gatekeeper.tokenCount))
        return metrics.text()
    }
}
