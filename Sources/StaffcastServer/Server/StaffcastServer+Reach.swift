import Foundation
import StaffcastCore
import StaffcastPostgres

/// `GET /v1/events/{id}/reach`: the roster, and who of it is connected to the event right
/// now on this server (the loops, live) or on another (the presence table, a few seconds old).
extension StaffcastServer {
    func reach(_ eventID: UUID, facts: Store.ReachFacts, loops: [LoopSnapshot]) -> Reach {
        let here = Set(loops.flatMap(\.members).filter { $0.eventID == eventID }.map(\.userID))
        return Reach.compute(eventID: eventID, roster: facts.roster, connected: here.union(facts.connectedElsewhere),
                             lastSeen: facts.lastSeen, zones: facts.zones)
    }
}
