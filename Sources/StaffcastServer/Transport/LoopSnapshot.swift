import Foundation
import StaffcastCore

/// What one loop holds at one moment (made on its thread, read anywhere).
struct LoopSnapshot: Sendable {
    struct Member: Sendable {
        var connectionID: Int
        var userID: UUID
        var eventID: UUID
        var connectedSince: Date
        var rtt: Double?
    }

    var index: Int
    var connections: Int
    var httpConnections: Int
    var subscribers: [UUID: Int]
    var members: [Member]
    var stats: EngineStats
    var inboxDepth: Int

    /// The same snapshot showing only `events` (what an event owner may see in status).
    func restricted(to events: Set<UUID>) -> LoopSnapshot {
        var s = self
        s.subscribers = subscribers.filter { events.contains($0.key) }
        s.members = members.filter { events.contains($0.eventID) }
        return s
    }
}
