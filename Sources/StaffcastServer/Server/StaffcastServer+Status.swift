import Foundation
import StaffcastCore

/// `/v1/status` and `/metrics`, answered on the service thread from its own state.
extension StaffcastServer {
    struct StatusSnapshot: Encodable, Sendable {
        struct EventStatus: Encodable, Sendable {
            let event_id: String
            let subscribers: Int
        }
        let node: String
        let version: String
        let uptime_seconds: Int
        let state: String
        let connections: Int
        let subscriptions: Int
        let events: [EventStatus]
        let database: String
        let listener: String
        let queued_database_jobs: Int
        let slow_clients_closed: Int
        let messages_fanned_out: Int
    }

    func statusSnapshot() -> StatusSnapshot {
        let counts = hub.subscriberCounts
        let r = readiness
        return StatusSnapshot(
            node: configuration.nodeID, version: StaffcastVersion.current,
            uptime_seconds: Int(Date().timeIntervalSince(startedAt)), state: state.rawValue,
            connections: connections.count, subscriptions: counts.values.reduce(0, +),
            events: counts.sorted { $0.key.uuidString < $1.key.uuidString }
                .map { StatusSnapshot.EventStatus(event_id: $0.key.uuidString.lowercased(), subscribers: $0.value) },
            database: r.database, listener: r.listener, queued_database_jobs: workers.queued,
            slow_clients_closed: stats.slowClientsClosed, messages_fanned_out: stats.messagesFannedOut)
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
