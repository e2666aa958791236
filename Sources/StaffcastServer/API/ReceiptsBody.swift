import Foundation
import StaffcastCore
import StaffcastPostgres

/// The JSON of `GET /v1/messages/{id}/receipts`, with `?limit=` a page of it (`ReceiptsPage`).
///
/// Answered from `jsonBytes`, written by hand: at a 10,000-staff event JSONEncoder (with its
/// RFC 3339 dates) took longer than the database, and receipts are what an organiser watches
/// during an emergency. `encode(to:)` stays the reference: a test checks both give the same
/// JSON, so a field added to one and not the other fails it.
struct ReceiptsBody: Encodable {
    /// The people written (all of them, or a page's first names).
    let receipts: Receipts
    let readCount: Int
    let totals: FunnelTotals
    /// With `?limit=`: `unread_count` and how many of each list were left out.
    let page: ReceiptsPage?

    /// The whole lists, as without `limit`.
    init(_ receipts: Receipts) {
        self.receipts = receipts
        readCount = receipts.readCount
        totals = receipts.totals
        page = nil
    }

    init(_ page: ReceiptsPage) {
        receipts = page.shown
        readCount = page.readCount
        totals = page.totals
        self.page = page
    }

    enum CodingKeys: String, CodingKey {
        case messageID = "message_id", eventID = "event_id", readCount = "read_count", readBy = "read_by", unreadBy = "unread_by"
        case totals, unreadCount = "unread_count", readByLeftOut = "read_by_left_out", unreadByLeftOut = "unread_by_left_out"
    }

    func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(receipts.messageID.wireText, forKey: .messageID)
        try c.encode(receipts.eventID.wireText, forKey: .eventID)
        try c.encode(readCount, forKey: .readCount)
        try c.encode(receipts.readBy, forKey: .readBy)
        try c.encode(receipts.unreadBy, forKey: .unreadBy)
        try c.encode(totals, forKey: .totals)
        if let page {
            try c.encode(page.unreadCount, forKey: .unreadCount)
            try c.encode(page.readLeftOut, forKey: .readByLeftOut)
            try c.encode(page.unreadLeftOut, forKey: .unreadByLeftOut)
        }
    }

    /// The same JSON as `encode(to:)` with sorted keys, written straight into bytes.
    var jsonBytes: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(160 + 100 * (receipts.readBy.count + receipts.unreadBy.count))
        JSONBytes.appendKey("event_id", first: true, to: &out)
        JSONBytes.appendUUID(receipts.eventID, to: &out)
        JSONBytes.appendKey("message_id", to: &out)
        JSONBytes.appendUUID(receipts.messageID, to: &out)
        Self.appendList("read_by", receipts.readBy, leftOutKey: "read_by_left_out", leftOut: page?.readLeftOut, to: &out)
        JSONBytes.appendKey("read_count", to: &out)
        JSONBytes.appendInt(readCount, to: &out)
        JSONBytes.appendKey("totals", to: &out)
        let t = totals
        let totals: [(StaticString, Int)] = [("email", t.email), ("live", t.live), ("push", t.push), ("read", t.read)]
        for (i, (name, count)) in totals.enumerated() {
            JSONBytes.appendKey(name, first: i == 0, to: &out)
            JSONBytes.appendInt(count, to: &out)
        }
        out.append(UInt8(ascii: "}"))
        Self.appendList("unread_by", receipts.unreadBy, leftOutKey: "unread_by_left_out", leftOut: page?.unreadLeftOut, to: &out)
        if let page {
            JSONBytes.appendKey("unread_count", to: &out)
            JSONBytes.appendInt(page.unreadCount, to: &out)
        }
        out += Array("}\n".utf8)
        return out
    }

    /// One of the two lists, then (on a page) how many of it the page left out: `<list>_left_out`
    /// sorts right after `<list>`, so the two are written together.
    private static func appendList(_ key: StaticString, _ people: [Receipts.Person], leftOutKey: StaticString, leftOut: Int?,
                                   to out: inout [UInt8]) {
        JSONBytes.appendKey(key, to: &out)
        append(people, to: &out)
        if let leftOut {
            JSONBytes.appendKey(leftOutKey, to: &out)
            JSONBytes.appendInt(leftOut, to: &out)
        }
    }

    private static func append(_ people: [Receipts.Person], to out: inout [UInt8]) {
        out.append(UInt8(ascii: "["))
        for (i, person) in people.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            JSONBytes.appendKey("display_name", first: true, to: &out)
            JSONBytes.appendString(person.displayName, to: &out)
            JSONBytes.appendKey("reached", to: &out)
            out.append(UInt8(ascii: "["))
            for (j, way) in person.reached.enumerated() {
                if j > 0 { out.append(UInt8(ascii: ",")) }
                JSONBytes.appendKey("at", first: true, to: &out)
                JSONBytes.appendRFC3339(way.at, to: &out)
                JSONBytes.appendKey("via", to: &out)
                JSONBytes.appendString(way.via, to: &out)
                out.append(UInt8(ascii: "}"))
            }
            out.append(UInt8(ascii: "]"))
            if let readAt = person.readAt {
                JSONBytes.appendKey("read_at", to: &out)
                JSONBytes.appendRFC3339(readAt, to: &out)
            }
            if let reply = person.reply {
                // Replies are few (one per person who answered): JSONEncoder is fine here.
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys]
                JSONBytes.appendKey("reply", to: &out)
                out += (try? encoder.encode(reply)).map(Array.init) ?? Array("null".utf8)
            }
            JSONBytes.appendKey("user_id", to: &out)
            JSONBytes.appendUUID(person.userID, to: &out)
            out.append(UInt8(ascii: "}"))
        }
        out.append(UInt8(ascii: "]"))
    }
}
