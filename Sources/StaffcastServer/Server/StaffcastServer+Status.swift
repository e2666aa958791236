import Foundation
import StaffcastCore
import StaffcastPostgres

/// `/v1/status` and `/metrics`, answered on the service thread from its own state.
extension StaffcastServer {
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
        let queued_database_jobs: Int
        let slow_clients_closed: Int
        let heartbeat_timeouts: Int
        let messages_fanned_out: Int
    }

    func statusSnapshot(facts: [Store.EventFacts], databaseLatency: TimeInterval) -> StatusSnapshot {
        let counts = hub.subscriberCounts
        let byID = Dictionary(facts.map { ($0.eventID, $0) }, uniquingKeysWith: { a, _ in a })
        let r = readiness
        return StatusSnapshot(
            node: configuration.nodeID, version: StaffcastVersion.current,
            uptime_seconds: Int(Date().timeIntervalSince(startedAt)), state: state.rawValue,
            connections: connections.count, subscriptions: counts.values.reduce(0, +),
            events: counts.sorted { $0.key.uuidString < $1.key.uuidString }.map { id, n in
                let f = byID[id]
                return StatusSnapshot.EventStatus(event_id: id.uuidString.lowercased(), name: f?.name, subscribers: n,
                                                  roster: f?.roster, last_message_seq: f?.lastMessageSeq,
                                                  last_message_at: f?.lastMessageAt.map(RFC3339.format))
            },
            database: r.database, database_latency_ms: (databaseLatency * 100_000).rounded() / 100, listener: r.listener,
            queued_database_jobs: workers.queued, slow_clients_closed: stats.slowClientsClosed,
            heartbeat_timeouts: stats.heartbeatTimeouts, messages_fanned_out: stats.messagesFannedOut)
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
    }

    /// Who of an event's roster is connected: this server's own connections (live) merged with
    /// what the other servers last wrote to the presence table (at most a few seconds old),
    /// plus what the database knows (unread, last read).
    func eventStatus(_ eventID: UUID, roster: [Store.RosterEntry], elsewhere: [Store.PresenceRow]) -> EventStatusBody {
        let now = Date()
        let remote = Dictionary(grouping: elsewhere, by: \.userID)
        let members = roster.map { entry -> EventStatusBody.Member in
            let live = hub.connections(ofUser: entry.userID).filter { hub.isSubscribed($0, to: eventID) }
                .compactMap { connections[$0] }
            let others = remote[entry.userID] ?? []
            let since = (live.map(\.openedAt) + others.map(\.connectedSince)).min()
            let rtts = live.compactMap { $0.lastRTT.map { ($0 * 100_000).rounded() / 100 } } + others.compactMap(\.rttMs)
            let opens = (recentOpens[entry.userID] ?? []).filter { now.timeIntervalSince($0) < 3_600 }.count
            return EventStatusBody.Member(
                user_id: entry.userID.uuidString.lowercased(), display_name: entry.displayName,
                access_level: entry.level.rawValue, connected: !live.isEmpty || !others.isEmpty,
                connected_since: since.map(RFC3339.format), connections: live.count + others.count,
                nodes: Array(Set((live.isEmpty ? [] : [configuration.nodeID]) + others.map(\.node))).sorted(),
                rtt_ms: rtts.min(), reconnects_last_hour: max(0, opens - 1), unread_count: entry.unreadCount,
                last_read_seq: entry.lastReadSeq, last_read_message_at: entry.lastReadSentAt.map(RFC3339.format))
        }
        return EventStatusBody(event_id: eventID.uuidString.lowercased(), node: configuration.nodeID,
                               subscribers: hub.subscriberCount(of: eventID) + elsewhere.count, roster: roster.count,
                               staff: members)
    }

    func metricsText() -> String {
        metrics.gauge("staffcast_connections", Double(connections.count))
        metrics.gauge("staffcast_subscriptions", Double(hub.subscriberCounts.values.reduce(0, +)))
        metrics.gauge("staffcast_database_jobs_queued", Double(workers.queued))
        metrics.gauge("staffcast_listener_up", listener?.state == .listening ? 1 : 0)
        metrics.gauge("staffcast_database_workers", Double(configuration.databaseWorkers))
        return metrics.text()
    }
}

/// The version staffcast reports in status and `--version`.
public enum StaffcastVersion {
    public static let current = "0.1.0"
}
