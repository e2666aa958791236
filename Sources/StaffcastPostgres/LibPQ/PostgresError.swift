/// Everything that can go wrong talking to PostgreSQL, with the SQLSTATE when the server sent
/// one and the statement as context. `code` is a struct so new kinds can be added freely.
public struct PostgresError: Error, CustomStringConvertible, Sendable {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(_ rawValue: String) { self.rawValue = rawValue }
        public static let connectionFailed = Code("connection_failed")
        public static let connectionLost = Code("connection_lost")
        /// The connection was lost (or its deadline passed) after a request that may commit had
        /// been sent whole: PostgreSQL may still carry it out (a stalled server runs the COMMIT
        /// it has buffered when it resumes). Never report such a request as not done.
        public static let outcomeUnknown = Code("outcome_unknown")
        public static let queryFailed = Code("query_failed")
        public static let unexpectedResult = Code("unexpected_result")
        public static let migration = Code("migration")
        public static let cluster = Code("cluster")
        /// A data dir without staffcast data, where the command may not create it.
        public static let noData = Code("no_data")
        public var description: String { rawValue }
    }

    public var code: Code
    /// Five-character SQLSTATE, e.g. "42501" for insufficient_privilege.
    public var sqlState: String?
    public var message: String
    /// The first line of the statement that failed, for logs (never its parameters).
    public var statement: String?

    public init(_ code: Code, _ message: String, sqlState: String? = nil, statement: String? = nil) {
        self.code = code
        self.message = message
        self.sqlState = sqlState
        self.statement = statement
    }

    /// True when the connection itself is gone and a new one may succeed.
    public var isConnectionProblem: Bool {
        code == .connectionFailed || code == .connectionLost || code == .outcomeUnknown || (sqlState?.hasPrefix("08") ?? false)
            || sqlState == "57P01" || sqlState == "57P02" || sqlState == "57P03"
    }

    public var description: String {
        var s = "\(code)"
        if let sqlState { s += " [\(sqlState)]" }
        s += ": \(message)"
        if let statement { s += " (in: \(statement))" }
        return s
    }
}
