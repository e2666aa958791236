import Foundation

/// The filters of `GET /v1/events/{id}/messages` (docs/protocol.md), read from its query
/// and validated. Pure.
public struct MessageSearch: Sendable, Equatable {
    /// Text the message contains (case-insensitive).
    public var text: String?
    public var messageType: MessageType?
    public var priority: Priority?
    /// A sender's user id, or part of their display name.
    public var sender: String?
    public var from: Date?
    public var to: Date?
    /// Expired messages too (the archive).
    public var includeExpired = false
    public var limit = Limits.defaultHistoryLimit
    /// Only messages with a smaller seq (paging back through results).
    public var beforeSeq: Int64?

    public init() {}

    /// The query names that make a listing a search.
    public static let parameters = ["q", "type", "priority", "sender", "from", "to", "include_expired"]

    /// True when the query asks for any filter or pages back with `before_seq` (otherwise the
    /// listing is the plain one, which pages forward by `since_seq`). `before_seq` alone used
    /// to fall through to the plain listing, which ignored it: a script paging back got the
    /// newest page again and again.
    public static func isSearch(_ query: [String: String]) -> Bool {
        query["before_seq"] != nil || parameters.contains { query[$0] != nil }
    }

    /// What `GET /v1/events/{id}/messages` takes; anything else is refused by name.
    public static let listingParameters = KnownFields(parameters + ["before_seq", "since_seq", "limit", "access_token"],
                                                      noun: "parameter")

    /// What is wrong with a listing's query, if anything: an unknown parameter, or `since_seq`
    /// beside `before_seq` or a filter (forward or back, not both).
    public static func listingProblem(_ query: [String: String]) -> StaffcastError? {
        do { try listingParameters.check(Array(query.keys), in: "The query") } catch { return error }
        if query["since_seq"] != nil && isSearch(query) {
            return .invalid("since_seq pages forward through the plain listing; it does not combine with before_seq or a search filter. Nothing was listed.")
        }
        return nil
    }

    public init(query: [String: String]) throws(StaffcastError) {
        if let q = query["q"], !q.isEmpty {
            try TextRules.requireStorable(q, field: "search text (q)")
            guard q.utf8.count <= 200 else { throw .invalid("q may be at most 200 bytes; got \(q.utf8.count).") }
            text = q
        }
        if let raw = query["type"], !raw.isEmpty {
            guard let t = MessageType(rawValue: raw) else {
                throw .invalid("type '\(raw.prefix(40))' is not one of broadcast, alert, emergency.")
            }
            messageType = t
        }
        if let raw = query["priority"], !raw.isEmpty {
            guard let p = Priority(rawValue: raw) else {
                throw .invalid("priority '\(raw.prefix(40))' is not one of low, normal, high, urgent.")
            }
            priority = p
        }
        if let raw = query["sender"], !raw.isEmpty {
            try TextRules.requireStorable(raw, field: "sender")
            guard raw.utf8.count <= 200 else { throw .invalid("sender may be at most 200 bytes.") }
            sender = raw
        }
        from = try Self.time(query, "from")
        to = try Self.time(query, "to")
        if let from, let to, from > to {
            throw .invalid("from (\(RFC3339.format(from))) is after to (\(RFC3339.format(to))); nothing could match.")
        }
        switch query["include_expired"] {
        case nil, "", "false", "0": includeExpired = false
        case "true", "1": includeExpired = true
        case let other?: throw .invalid("include_expired must be true or false; got '\(other.prefix(20))'.")
        }
        if let raw = query["limit"], !raw.isEmpty {
            guard let n = Int(raw), (1...Limits.maxHistoryLimit).contains(n) else {
                throw .invalid("limit must be a whole number from 1 to \(Limits.maxHistoryLimit); got '\(raw.prefix(20))'.")
            }
            limit = n
        }
        if let raw = query["before_seq"], !raw.isEmpty {
            guard let n = Int64(raw), n >= 1 else { throw .invalid("before_seq must be a whole number from 1; got '\(raw.prefix(20))'.") }
            beforeSeq = n
        }
    }

    private static func time(_ query: [String: String], _ name: String) throws(StaffcastError) -> Date? {
        guard let raw = query[name], !raw.isEmpty else { return nil }
        guard let d = RFC3339.parse(raw) else {
            throw .invalid("\(name) '\(raw.prefix(60))' is not an RFC 3339 time such as 2026-06-01T09:00:00Z.")
        }
        return d
    }

    /// `q` as a LIKE pattern that matches the text literally (%, _ and \ escaped).
    public var likePattern: String? {
        text.map { "%" + Self.escapeLike($0) + "%" }
    }

    public static func escapeLike(_ s: String) -> String {
        var out = ""
        for ch in s {
            if ch == "%" || ch == "_" || ch == "\\" { out.append("\\") }
            out.append(ch)
        }
        return out
    }
}
