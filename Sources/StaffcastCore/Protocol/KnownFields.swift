/// The fields a JSON request body may hold. A body with any other key is refused with the key
/// named, rather than half-read: `{"message": "Evacuate hall B", "priorty": "urgent"}` went out
/// as a normal message, and `PATCH {"priority": "urgent"}` answered 200 having changed nothing.
/// Pure.
public struct KnownFields: Sendable {
    public let names: [String]
    /// What one is called in the error: "field" (of a JSON body) or "parameter" (of a query).
    public let noun: String

    public init(_ names: [String], noun: String = "field") {
        self.names = names
        self.noun = noun
    }

    /// Throws `invalid` naming the first key of `keys` not in `names`, with the known field it
    /// most likely meant. `what` starts the sentence ("The JSON body", "A template").
    public func check(_ keys: [String], in what: String) throws(StaffcastError) {
        guard let unknown = keys.first(where: { !names.contains($0) }) else { return }
        let near = names.map { ($0, EditDistance.between(unknown.lowercased(), $0)) }.min { $0.1 < $1.1 }
        let hint = near.flatMap { $0.1 <= max(2, unknown.count / 4) ? " (did you mean '\($0.0)'?)" : nil } ?? ""
        throw .invalid("\(what) has a \(noun) staffcast does not know: '\(unknown.prefix(40))'\(hint). Known \(noun)s: \(names.joined(separator: ", ")). Nothing was stored.")
    }
}

extension KnownFields {
    /// A query that may hold a token and nothing else (beside a JSON body, or an edit's).
    public static let tokenOnlyQuery = KnownFields(["access_token"], noun: "parameter")
}

extension WireFields {
    /// Refuses a key outside `known` (see `KnownFields`).
    public func refuseUnknown(_ known: KnownFields, in what: String) throws(StaffcastError) {
        try known.check(keys, in: what)
    }
}
