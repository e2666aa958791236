import StaffcastPostgres

/// The JSON of `GET /v1/messages/{id}/receipts`.
struct ReceiptsBody: Encodable {
    let receipts: Receipts
    init(_ receipts: Receipts) { self.receipts = receipts }

    enum CodingKeys: String, CodingKey {
        case messageID = "message_id", eventID = "event_id", readCount = "read_count", readBy = "read_by", unreadBy = "unread_by"
    }

    func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(receipts.messageID.uuidString.lowercased(), forKey: .messageID)
        try c.encode(receipts.eventID.uuidString.lowercased(), forKey: .eventID)
        try c.encode(receipts.readCount, forKey: .readCount)
        try c.encode(receipts.readBy, forKey: .readBy)
        try c.encode(receipts.unreadBy, forKey: .unreadBy)
    }
}
