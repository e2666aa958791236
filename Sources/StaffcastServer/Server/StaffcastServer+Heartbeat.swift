import CLibWebSockets
import Foundation
import StaffcastPostgres

/// Heartbeats, on the service thread, once a second: a connection silent for one
/// `heartbeatInterval` is pinged; one silent for two is closed, so connections lost to dead
/// Wi-Fi or sleeping laptops do not pile up. The pong gives each connection's round trip.
extension StaffcastServer {
    func tick() {
        let now = Self.monotonicNow()
        if now - lastPresenceWrite >= Self.presenceInterval {
            lastPresenceWrite = now
            publishPresence()
        }
        let interval = Double(configuration.heartbeatInterval)
        for connection in connections.values where connection.closing == nil {
            let silent = now - connection.lastHeard
            if silent >= 2 * interval {
                logger.info("closing silent connection", metadata: ["conn": "\(connection.id)", "silent_s": "\(Int(silent))"])
                connection.closing = .immediately(1001, "no answer to heartbeat")
                stats.heartbeatTimeouts += 1
                lws_callback_on_writable(connection.wsi)
            } else if silent >= interval, connection.pingSentAt == nil, !connection.pingDue {
                connection.pingDue = true
                lws_callback_on_writable(connection.wsi)
            }
        }
        if Int(now) % 60 == 0 {
            let wall = Date()
            recentOpens = recentOpens.compactMapValues { opens in
                let kept = opens.filter { wall.timeIntervalSince($0) < 3_600 }
                return kept.isEmpty ? nil : kept
            }
        }
        if recentAccess.count > 1_000 {
            let wall = Date()
            recentAccess = recentAccess.filter { wall.timeIntervalSince($0.value.at) < 300 }
        }
    }

    /// Seconds between presence refreshes (other servers ignore rows older than 30 s).
    static let presenceInterval = 3.0

    /// Writes this server's subscriptions to the presence table (on a worker), so status on any
    /// server sees who is connected to this one.
    func publishPresence() {
        var rows: [Store.PresenceRow] = []
        for (id, connection) in connections {
            for event in hub.events(of: id) {
                rows.append(Store.PresenceRow(node: configuration.nodeID, connectionID: Int64(id), userID: connection.identity.userID,
                                              eventID: event, connectedSince: connection.openedAt,
                                              rttMs: connection.lastRTT.map { ($0 * 100_000).rounded() / 100 }))
            }
        }
        let node = configuration.nodeID
        let logger = self.logger
        let snapshot = rows
        _ = workers.submit { session in
            do {
                try session.store().replacePresence(node: node, rows: snapshot)
            } catch {
                logger.debug("presence not written", metadata: ["error": "\(error)"])
            }
        }
    }

    func receivedPong(_ user: UnsafeMutableRawPointer?) {
        guard let connection = connections[Self.sessionID(user)] else { return }
        let now = Self.monotonicNow()
        connection.lastHeard = now
        if let sent = connection.pingSentAt {
            connection.lastRTT = now - sent
            connection.pingSentAt = nil
            metrics.heartbeatRTT.recordSeconds(now - sent)
        }
    }
}
