import CLibPQ
import Foundation

/// The one owner of a libpq connection (`PGconn`); finishes it when released.
///
/// Not thread-safe: each instance belongs to exactly one thread (a database worker, the
/// change listener, or a command-line command). All statements use bound parameters
/// (`PQexecParams`); SQL is never built from values.
public final class PGConnection {
    private(set) var handle: OpaquePointer?
    public let conninfo: String

    /// Defaults every connection gets unless its conninfo says otherwise: a connect deadline,
    /// and TCP keepalives plus a user timeout so that a database host that vanished is noticed
    /// in seconds instead of the kernel's two hours.
    /// The application name is `applicationName` (the process's), so `pg_stat_activity` tells
    /// one staffcast process's sessions from another's (`EmbeddedCluster.otherClients`).
    static let defaults: [(String, String)] = [
        ("connect_timeout", "5"), ("keepalives", "1"), ("keepalives_idle", "10"),
        ("keepalives_interval", "5"), ("keepalives_count", "3"), ("tcp_user_timeout", "20000"),
        ("fallback_application_name", applicationName),
    ]

    /// "staffcast-<pid>": this process's sessions as PostgreSQL lists them.
    public static let applicationName = "staffcast-\(getpid())"

    /// Connects, or throws `connectionFailed` with libpq's reason.
    public init(conninfo: String) throws(PostgresError) {
        self.conninfo = conninfo
        // The defaults come first; the conninfo (expanded from `dbname`) overrides them.
        let pairs = Self.defaults + [("dbname", conninfo)]
        let keys = pairs.map { strdup($0.0) }
        let values = pairs.map { strdup($0.1) }
        defer { (keys + values).forEach { free($0) } }
        let made: OpaquePointer? = (keys.map { UnsafePointer($0) } + [nil]).withUnsafeBufferPointer { k in
            (values.map { UnsafePointer($0) } + [nil]).withUnsafeBufferPointer { v in
                PQconnectdbParams(k.baseAddress, v.baseAddress, 1)
            }
        }
        guard let conn = made else {
            throw PostgresError(.connectionFailed, "libpq could not allocate a connection")
        }
        handle = conn
        guard PQstatus(conn) == CONNECTION_OK else {
            let reason = Self.errorMessage(conn)
            PQfinish(conn)
            handle = nil
            throw PostgresError(.connectionFailed, reason)
        }
        // NOTICEs ("relation already exists, skipping") are for psql users, not our stderr.
        PQsetNoticeProcessor(conn, ignoreNotice, nil)
    }

    deinit {
        if let handle { PQfinish(handle) }
    }

    public var isHealthy: Bool {
        guard let handle else { return false }
        return PQstatus(handle) == CONNECTION_OK
    }

    /// The socket libpq reads from, for `poll` in the change listener.
    public var socket: Int32 { handle.map { PQsocket($0) } ?? -1 }

    /// Runs one statement with text parameters (nil is SQL NULL) and returns its rows.
    ///
    /// Each distinct statement text is prepared once per connection and then executed by name:
    /// PostgreSQL parses and plans it once instead of on every call (planning was most of the
    /// database's CPU per message in bench/). Every statement staffcast runs is constant text
    /// with bound parameters, so the cache stays small; it is capped at `maxPrepared` all the
    /// same, past which statements run unprepared.
    ///
    /// Every wait has a deadline (`timeout` seconds, 60 unless told): a database that stops
    /// answering (a paused VM, a stalled disk) costs a worker that long, not forever; the
    /// connection is closed then, as its state is unknown.
    @discardableResult
    public func query(_ sql: String, _ params: [String?] = [], timeout: Double = 60) throws(PostgresError) -> PGResult {
        guard let handle, PQstatus(handle) == CONNECTION_OK else {
            throw PostgresError(.connectionLost, "the database connection is closed", statement: Self.firstLine(sql))
        }
        let deadline = Self.deadline(after: timeout)
        // libpq wants C strings that outlive the call; copy them and free them after.
        let cParams: [UnsafeMutablePointer<CChar>?] = params.map { $0.flatMap { strdup($0) } }
        defer { cParams.forEach { free($0) } }
        let name = try statementName(for: sql, parameterCount: params.count, deadline: deadline)
        // Outside a transaction the statement commits itself: lost after it was sent, it may
        // have (an invite redeemed, a token issued), so it is not reported as not done.
        let autocommit = PQtransactionStatus(handle) == PQTRANS_IDLE
        let raw = try exchange(handle, sql, deadline: deadline, mayCommit: autocommit) { handle in
            cParams.withUnsafeBufferPointer { buffer in
                guard let base = buffer.baseAddress, !buffer.isEmpty else {
                    if let name { return PQsendQueryPrepared(handle, name, 0, nil, nil, nil, 0) }
                    return PQsendQueryParams(handle, sql, 0, nil, nil, nil, nil, 0)
                }
                return base.withMemoryRebound(to: UnsafePointer<CChar>?.self, capacity: buffer.count) { values in
                    if let name { return PQsendQueryPrepared(handle, name, Int32(buffer.count), values, nil, nil, 0) }
                    return PQsendQueryParams(handle, sql, Int32(buffer.count), nil, values, nil, nil, 0)
                }
            }
        }
        do {
            return try check(raw, sql)
        } catch where autocommit && error.code == .connectionLost {
            // An error result that says the connection went: the statement was sent.
            throw PostgresError(.outcomeUnknown, error.message + " (after the statement was sent: it may still be carried out)",
                                sqlState: error.sqlState, statement: error.statement)
        }
    }

    /// Sends one request with `send` (a `PQsend…` call) and waits, to `deadline`, for its
    /// results: the first failed one, else the last (as `PQexec` answers). The connection is
    /// non-blocking meanwhile, so neither writing the request nor reading its answer can wait
    /// past the deadline; past it the connection is closed (see `wait`).
    ///
    /// `mayCommit`: the request can commit by itself (a statement outside a transaction); when
    /// the connection is lost after it was sent whole, the error is `outcomeUnknown`.
    private func exchange(_ handle: OpaquePointer, _ sql: String, deadline: UInt64, mayCommit: Bool = false,
                          _ send: (OpaquePointer) -> Int32) throws(PostgresError) -> OpaquePointer? {
        guard PQsetnonblocking(handle, 1) == 0 else { throw PostgresError(.connectionLost, Self.errorMessage(handle)) }
        defer { if let h = self.handle { PQsetnonblocking(h, 0) } }
        guard send(handle) == 1 else {
            throw PostgresError(.connectionLost, Self.errorMessage(handle), statement: Self.firstLine(sql))
        }
        // Not sent whole: nothing of it can have run.
        try pump(handle, deadline: deadline)
        var kept: OpaquePointer?
        do throws(PostgresError) {
            while let next = try nextResult(handle, deadline: deadline) {
                if Self.isCopy(next) {
                    // COPY is not spoken here; PQgetResult would hand back COPY results forever.
                    PQclear(next)
                    PQfinish(handle)
                    self.handle = nil
                    throw PostgresError(.unexpectedResult, "COPY is not supported; the connection was closed",
                                        statement: Self.firstLine(sql))
                }
                let failed = kept.map { Self.isFailure($0) } ?? false
                if failed { PQclear(next) } else { if let old = kept { PQclear(old) }; kept = next }
            }
        } catch {
            if let kept { PQclear(kept) }
            guard mayCommit, error.code == .connectionLost else { throw error }
            throw PostgresError(.outcomeUnknown, error.message + " (after the statement was sent: it may still be carried out)",
                                sqlState: error.sqlState, statement: Self.firstLine(sql))
        }
        return kept
    }

    private static func isCopy(_ result: OpaquePointer) -> Bool {
        let status = PQresultStatus(result)
        return status == PGRES_COPY_IN || status == PGRES_COPY_OUT || status == PGRES_COPY_BOTH
    }

    private static func isFailure(_ result: OpaquePointer) -> Bool {
        let status = PQresultStatus(result)
        return status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK && status != PGRES_EMPTY_QUERY
    }

    static func deadline(after seconds: Double) -> UInt64 {
        DispatchTime.now().uptimeNanoseconds + UInt64(max(0.001, seconds) * 1e9)
    }

    static let maxPrepared = 256
    private var prepared: [String: String] = [:]

    /// The name `sql` is prepared under on this connection, preparing it on first use (to
    /// `deadline`); nil when it cannot be prepared now (the cache is full, or the transaction has
    /// failed: then the statement runs unprepared and reports its own error).
    func statementName(for sql: String, parameterCount: Int, deadline: UInt64) throws(PostgresError) -> String? {
        if let name = prepared[sql] { return name }
        guard let handle, prepared.count < Self.maxPrepared else { return nil }
        let name = "staffcast_\(prepared.count)"
        guard let result = try exchange(handle, sql, deadline: deadline, { PQsendPrepare($0, name, sql, Int32(parameterCount), nil) })
        else { return nil }
        defer { PQclear(result) }
        guard PQresultStatus(result) == PGRES_COMMAND_OK else { return nil }
        prepared[sql] = name
        return name
    }

    /// Writes everything libpq holds for the server, reading what the server sends meanwhile.
    func pump(_ handle: OpaquePointer, deadline: UInt64) throws(PostgresError) {
        while true {
            let flushed = PQflush(handle)
            if flushed == 0 { return }
            guard flushed > 0 else { throw PostgresError(.connectionLost, Self.errorMessage(handle)) }
            let ready = try wait(handle, for: Int16(POLLIN | POLLOUT), deadline: deadline)
            if ready & Int16(POLLIN) != 0, PQconsumeInput(handle) != 1 {
                throw PostgresError(.connectionLost, Self.errorMessage(handle))
            }
        }
    }

    /// The next result of the pipeline, waiting (to the deadline) for the server to send it.
    func nextResult(_ handle: OpaquePointer, deadline: UInt64) throws(PostgresError) -> OpaquePointer? {
        while PQisBusy(handle) == 1 {
            _ = try wait(handle, for: Int16(POLLIN), deadline: deadline)
            guard PQconsumeInput(handle) == 1 else { throw PostgresError(.connectionLost, Self.errorMessage(handle)) }
        }
        return PQgetResult(handle)
    }

    /// poll(2) on the connection's socket until `events` or the deadline; at the deadline the
    /// connection is closed (what the server has done by then is unknown) and this throws.
    private func wait(_ handle: OpaquePointer, for events: Int16, deadline: UInt64) throws(PostgresError) -> Int16 {
        while true {
            let now = DispatchTime.now().uptimeNanoseconds
            guard now < deadline else {
                PQfinish(handle)
                self.handle = nil
                throw PostgresError(.connectionLost, "the database did not answer in time; the connection was closed")
            }
            var fd = pollfd(fd: PQsocket(handle), events: events, revents: 0)
            let n = poll(&fd, 1, Int32(min(1_000, (deadline - now) / 1_000_000 + 1)))
            if n > 0 { return fd.revents }
            if n < 0 && errno != EINTR { throw PostgresError(.connectionLost, "poll: \(String(cString: strerror(errno)))") }
        }
    }

    /// One round trip (`SELECT 1`) that gives up after `timeout` seconds, closing the
    /// connection then: a database that stopped answering is found out in that time, not when
    /// TCP gives up (never, over a Unix socket). For the readiness probe.
    public func ping(timeout: Double) throws(PostgresError) {
        try pipeline([("SELECT 1", [])], timeout: timeout, mayCommit: false)
    }

    /// Runs one or more statements without parameters (migrations, BEGIN/COMMIT).
    @discardableResult
    /// Waits at most `timeout` seconds (60 unless told; a migration is given longer).
    public func execute(_ sql: String, timeout: Double = 60) throws(PostgresError) -> PGResult {
        guard let handle, PQstatus(handle) == CONNECTION_OK else {
            throw PostgresError(.connectionLost, "the database connection is closed", statement: Self.firstLine(sql))
        }
        return try check(exchange(handle, sql, deadline: Self.deadline(after: timeout)) { PQsendQuery($0, sql) }, sql)
    }

    func check(_ raw: OpaquePointer?, _ sql: String) throws(PostgresError) -> PGResult {
        guard let raw else {
            throw PostgresError(.connectionLost, handle.map(Self.errorMessage) ?? "no result", statement: Self.firstLine(sql))
        }
        let result = PGResult(raw)
        switch PQresultStatus(raw) {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY:
            return result
        default:
            let sqlState = PQresultErrorField(raw, Int32(UInt8(ascii: "C"))).map { String(cString: $0) }
            let primary = PQresultErrorField(raw, Int32(UInt8(ascii: "M"))).map { String(cString: $0) }
            let message = primary ?? PQresultErrorMessage(raw).map { String(cString: $0) } ?? "query failed"
            let lost = handle.map { PQstatus($0) != CONNECTION_OK } ?? true
            throw PostgresError(lost ? .connectionLost : .queryFailed, message, sqlState: sqlState,
                                statement: Self.firstLine(sql))
        }
    }

    // MARK: transactions

    /// Runs `body` in one transaction: committed when it returns, rolled back when it throws.
    public func transaction<T>(_ mode: String = "READ COMMITTED", _ body: (PGConnection) throws -> T) throws -> T {
        try inTransaction(readOnly: mode.hasSuffix("READ ONLY"), { try execute("BEGIN ISOLATION LEVEL \(mode)") }, body)
    }

    /// Runs `body` in one transaction as `user`: the role becomes `staffcast_app` and
    /// `staffcast.user_id` is set, so row-level security judges every statement as that user.
    ///
    /// The three opening statements go in one pipeline: one round trip instead of three.
    public func transaction<T>(asUser user: UUID, _ mode: String = "READ COMMITTED",
                               _ body: (PGConnection) throws -> T) throws -> T {
        try inTransaction(readOnly: mode.hasSuffix("READ ONLY"), {
            try pipeline([("BEGIN ISOLATION LEVEL \(mode)", []), ("SET LOCAL ROLE staffcast_app", []),
                          ("SELECT set_config('staffcast.user_id', $1, true)", [user.wireText])])
        }, body)
    }

    /// Opens a transaction with `begin` and runs `body` in it: committed when it returns,
    /// rolled back when it (or the opening) throws.
    private func inTransaction<T>(readOnly: Bool, _ begin: () throws -> Void, _ body: (PGConnection) throws -> T) throws -> T {
        do {
            try begin()
            let value = try body(self)
            do {
                try execute("COMMIT")
            } catch {
                // The COMMIT was sent: whether a writing transaction took effect is not known.
                guard error.code == .connectionLost, !readOnly else { throw error }
                throw PostgresError(.outcomeUnknown, error.message + " (during COMMIT: it may have been committed)",
                                    sqlState: error.sqlState, statement: "COMMIT")
            }
            return value
        } catch {
            if isHealthy { _ = try? execute("ROLLBACK") }
            throw error
        }
    }

    // MARK: LISTEN/NOTIFY

    /// Reads what arrived on the socket and returns the payloads of pending notifications
    /// (staffcast listens on one channel; each trigger's payload names its log).
    public func drainNotifications() throws(PostgresError) -> [String] {
        guard let handle else { throw PostgresError(.connectionLost, "the database connection is closed") }
        guard PQconsumeInput(handle) == 1 else {
            throw PostgresError(.connectionLost, Self.errorMessage(handle))
        }
        var payloads: [String] = []
        while let note = PQnotifies(handle) {
            if let extra = note.pointee.extra { payloads.append(String(cString: extra)) }
            PQfreemem(note)
        }
        return payloads
    }

    // MARK: helpers

    static func errorMessage(_ conn: OpaquePointer) -> String {
        guard let text = PQerrorMessage(conn) else { return "unknown libpq error" }
        let message = String(cString: text).trimmingCharacters(in: .whitespacesAndNewlines)
        return message.isEmpty ? "unknown libpq error" : message
    }

    static func firstLine(_ sql: String) -> String {
        let line = sql.split(separator: "\n", omittingEmptySubsequences: true).first.map(String.init) ?? sql
        return String(line.trimmingCharacters(in: .whitespaces).prefix(120))
    }

    /// Quotes a value for a conninfo string (`key='value'`).
    public static func conninfoQuote(_ value: String) -> String {
        "'" + value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'"
    }
}

/// libpq's notice processor that drops the notice.
private func ignoreNotice(_ arg: UnsafeMutableRawPointer?, _ message: UnsafePointer<CChar>?) {}
