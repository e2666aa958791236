/// `GET /v1/messages/{id}/receipts?limit=N` (docs/protocol.md): at most N people in each of
/// `read_by` and `unread_by` (in their usual order, by name), with the counts and the funnel's
/// totals of everyone. At 10,000 staff the whole lists were about a megabyte per message, and the
/// console shows a few names. The CSV always lists everyone (it is for the safety officer), so
/// `limit` with CSV is refused rather than ignored. Pure.
public struct ReceiptsPage: Sendable, Equatable {
    /// At most this many names in each list.
    public static let maxLimit = 10_000

    /// What the receipts route takes; anything else is refused by name.
    public static let parameters = KnownFields(["limit", "format", "access_token"], noun: "parameter")

    /// The limit a query asks for; nil without one (the whole lists, as they always were).
    /// `csv`: the request asks for CSV (by `format` or the Accept header).
    public static func limit(query: [String: String], csv: Bool) throws(StaffcastError) -> Int? {
        try parameters.check(Array(query.keys), in: "The query")
        guard let limit = try QueryNumber.read(query, "limit", 1...Int64(maxLimit)) else { return nil }
        if csv {
            throw .invalid("The receipts CSV always lists everyone (it is for the safety officer): leave out limit.")
        }
        return Int(limit)
    }

    /// The first names of each list; the counts and totals below are of everyone.
    public var shown: Receipts
    public var readCount: Int
    public var unreadCount: Int
    public var totals: FunnelTotals
    /// People of each list not in `shown`.
    public var readLeftOut: Int { readCount - shown.readBy.count }
    public var unreadLeftOut: Int { unreadCount - shown.unreadBy.count }

    public init(_ all: Receipts, limit: Int) {
        shown = Receipts(messageID: all.messageID, eventID: all.eventID, readBy: Array(all.readBy.prefix(limit)),
                         unreadBy: Array(all.unreadBy.prefix(limit)))
        readCount = all.readBy.count
        unreadCount = all.unreadBy.count
        totals = all.totals
    }
}
