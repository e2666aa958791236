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

    /// The JSON of `GET /v1/messages/{id}/receipts`, decoded.
    public struct ReceiptList: Sendable, Decodable, Equatable {
        public struct Person: Sendable, Decodable, Equatable {
            public var userID: UUID
            public var displayName: String
            public var readAt: String?
            /// Their latest reply to the message (organiser's toolbox), if any.
            public var reply: Reply?
            /// How the message reached them (live, push, email), oldest first.
            public var reached: [Reached]?
            enum CodingKeys: String, CodingKey {
                case userID = "user_id", displayName = "display_name", readAt = "read_at", reply, reached
            }
        }
        public var messageID: UUID
        public var eventID: UUID
        public var readCount: Int
        public var readBy: [Person]
        public var unreadBy: [Person]
        /// The delivery funnel's totals (people reached live, by push, by email; who read it).
        public var totals: FunnelTotals?
        enum CodingKeys: String, CodingKey {
            case messageID = "message_id", eventID = "event_id", readCount = "read_count", readBy = "read_by", unreadBy = "unread_by"
            case totals
        }
    }

    /// `GET /v1/messages/{id}/receipts` (admins and owners of its event); also the raw JSON.
    public func receipts(message: UUID) throws(ClientError) -> (list: ReceiptList, json: Data) {
        let data = try call("GET", "/v1/messages/\(message.uuidString.lowercased())/receipts")
        return (try decode(ReceiptList.self, data, what: "a receipts list"), data)
    }
}
