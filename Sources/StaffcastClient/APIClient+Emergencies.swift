import Foundation
import StaffcastCore

/// Reach and receipts (docs/protocol.md, Emergencies).
extension APIClient {
    /// `GET /v1/events/{id}/reach`: who of the roster is connected now.
    /// With `teams`, the roster is the audience a message to those teams would have.
    public func reach(event: UUID, teams: [String] = []) throws(ClientError) -> Reach {
        let data = try call("GET", "/v1/events/\(event.uuidString.lowercased())/reach",
                            query: teams.isEmpty ? [:] : ["teams": teams.joined(separator: ",")])
        return try decode(Reach.self, data, what: "a reach report")
    }

    /// `GET /v1/messages/{id}/receipts` (admins and owners of its event); also the raw JSON.
    public func receipts(message: UUID) throws(ClientError) -> (list: Receipts, json: Data) {
        let data = try call("GET", "/v1/messages/\(message.uuidString.lowercased())/receipts")
        return (try decode(Receipts.self, data, what: "a receipts list"), data)
    }
}
