import Foundation
import StaffcastCore
import StaffcastPostgres

/// The JSON of `GET /v1/messages/{id}/receipts`.
///
/// Answered from `jsonBytes`, written by hand: at a 10,000-staff event JSONEncoder (with its
/// RFC 3339 dates) took longer than the database, and receipts are what an organiser watches
/// during an emergency. `encode(to:)` stays the reference: a test checks both give the same
/// JSON, so a field added to one and not the other fails it.
struct ReceiptsBody: Encodable {
    let receipts: Receipts
    init(_ receipts: Receipts) { self.receipts = receipts }

    enum CodingKeys: String, CodingKey {
        case messageID = "message_id", eventID = "event_id", readCount = "read_count", readBy = "read_by", unreadBy = "unread_by"
        case totals
    }

    func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(receipts.messageID.uuidString.lowercased(), forKey: .messageID)
        try c.encode(receipts.eventID.uuidString.lowercased(), forKey: .eventID)
        try c.encode(receipts.readCount, forKey: .readCount)
        try c.encode(receipts.readBy, forKey: .readBy)
        try c.encode(receipts.unreadBy, forKey: .unreadBy)
        try c.encode(receipts.totals, forKey: .totals)
    }

    /// The same JSON as `encode(to:)` with sorted keys, written straight into bytes.
    var jsonBytes: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(160 + 100 * (receipts.readBy.count + receipts.unreadBy.count))
        out += Array(#"{"event_id":"#.utf8)
        JSONBytes.appendUUID(receipts.eventID, to: &out)
        out += Array(#","message_id":"#.utf8)
        JSONBytes.appendUUID(receipts.messageID, to: &out)
        out += Array(#","read_by":"#.utf8)
        Self.append(receipts.readBy, to: &out)
        out += Array(#","read_count":"#.utf8)
        JSONBytes.appendInt(receipts.readCount, to: &out)
        let totals = receipts.totals
        out += Array(#","totals":{"email":"#.utf8)
        JSONBytes.appendInt(totals.email, to: &out)
        out += Array(#","live":"#.utf8)
        JSONBytes.appendInt(totals.live, to: &out)
        out += Array(#","push":"#.utf8)
        JSONBytes.appendInt(totals.push, to: &out)
        out += Array(#","read":"#.utf8)
        JSONBytes.appendInt(totals.read, to: &out)
        out += Array(#"},"unread_by":"#.utf8)
        Self.append(receipts.unreadBy, to: &out)
        out += Array("}\n".utf8)
        return out
    }

    private static func append(_ people: [Receipts.Person], to out: inout [UInt8]) {
        out.append(UInt8(ascii: "["))
        for (i, person) in people.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            out += Array(#"{"display_name":"#.utf8)
            JSONBytes.appendString(person.displayName, to: &out)
            out += Array(#","reached":["#.utf8)
            for (j, way) in person.reached.enumerated() {
                out += Array((j > 0 ? #",{"at":"# : #"{"at":"#).utf8)
                JSONBytes.appendRFC3339(way.at, to: &out)
                out += Array(#","via":"#.utf8)
                JSONBytes.appendString(way.via, to: &out)
                out.append(UInt8(ascii: "}"))
            }
            out.append(UInt8(ascii: "]"))
            if let readAt = person.readAt {
                out += Array(#","read_at":"#.utf8)
                JSONBytes.appendRFC3339(readAt, to: &out)
            }
            if let reply = person.reply {
                // Replies are few (one per person who answered): JSONEncoder is fine here.
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys]
                out += Array(#","reply":"#.utf8)
                out += (try? encoder.encode(reply)).map(Array.init) ?? Array("null".utf8)
            }
            out += Array(#","user_id":"#.utf8)
            JSONBytes.appendUUID(person.userID, to: &out)
            out.append(UInt8(ascii: "}"))
        }
        out.append(UInt8(ascii: "]"))
    }
}
