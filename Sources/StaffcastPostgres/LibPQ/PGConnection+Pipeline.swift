import CLibPQ
import Foundation

/// Pipeline mode: many statements, one round trip (libpq 14+), and the transactions built on
/// it. Same thread rules as `PGConnection`: the one thread that owns the connection.
extension PGConnection {
    /// Runs `statements` in libpq's pipeline mode: all are sent, then one sync, then every
    /// result is read — one round trip to the server however many statements there are.
    /// PostgreSQL runs them in order; after one fails, the rest are skipped, and the first
    /// failure is thrown once every result has been read (the connection is then ready for
    /// a ROLLBACK). Parameterised statements use the prepared-statement cache like `query`.
    ///
    /// The connection is non-blocking for the pipeline: while our statements are still being
    /// written, the server's results are read as they come (`pump`), so neither side can
    /// block writing to the other (with blocking writes a batch of 2,000 marks deadlocked:
    /// PostgreSQL waited to write results we were not reading yet). Every wait has a deadline
    /// (`timeout` seconds, 60 unless told); past it the connection is closed,
    /// as its state is unknown.
    @discardableResult
    ///
    /// `mayCommit`: whether the pipeline can commit anything (nil: judged from the statements:
    /// a COMMIT, or statements outside a transaction that open none). When it can and the
    /// connection is lost after it was sent whole, the error is `outcomeUnknown`.
    public func pipeline(_ statements: [(sql: String, params: [String?])],
                         timeout: Double = 60, mayCommit declared: Bool? = nil) throws(PostgresError) -> [PGResult] {
        guard let handle, PQstatus(handle) == CONNECTION_OK else {
            throw PostgresError(.connectionLost, "the database connection is closed",
                                statement: statements.first.map { Self.firstLine($0.sql) })
        }
        let deadline = Self.deadline(after: timeout)
        // Statements are prepared before the pipeline starts (a prepare waits for its answer).
        var names: [String?] = []
        for statement in statements {
            names.append(statement.params.isEmpty ? nil
                         : try statementName(for: statement.sql, parameterCount: statement.params.count, deadline: deadline))
        }
        guard PQsetnonblocking(handle, 1) == 0, PQenterPipelineMode(handle) == 1 else {
            throw PostgresError(.connectionLost, Self.errorMessage(handle))
        }
        defer {
            if let h = self.handle {
                PQexitPipelineMode(h)
                PQsetnonblocking(h, 0)
            }
        }
        // Whether this pipeline can commit something: it holds a COMMIT, or it runs outside a
        // transaction (each statement commits itself) and opens none.
        let outsideTransaction = PQtransactionStatus(handle) == PQTRANS_IDLE
        let mayCommit = declared ?? (statements.contains { $0.sql == "COMMIT" }
            || (outsideTransaction && !(statements.first?.sql.hasPrefix("BEGIN") ?? false)))
        for (statement, name) in zip(statements, names) {
            let cParams: [UnsafeMutablePointer<CChar>?] = statement.params.map { $0.flatMap { strdup($0) } }
            defer { cParams.forEach { free($0) } }
            let sent: Int32 = cParams.withUnsafeBufferPointer { buffer in
                let count = Int32(buffer.count)
                guard let base = buffer.baseAddress, !buffer.isEmpty else {
                    return PQsendQueryParams(handle, statement.sql, 0, nil, nil, nil, nil, 0)
                }
                return base.withMemoryRebound(to: UnsafePointer<CChar>?.self, capacity: buffer.count) { values in
                    if let name { return PQsendQueryPrepared(handle, name, count, values, nil, nil, 0) }
                    return PQsendQueryParams(handle, statement.sql, count, nil, values, nil, nil, 0)
                }
            }
            guard sent == 1 else {
                throw PostgresError(.connectionLost, Self.errorMessage(handle), statement: Self.firstLine(statement.sql))
            }
        }
        guard PQpipelineSync(handle) == 1 else {
            throw PostgresError(.connectionLost, Self.errorMessage(handle))
        }
        try pump(handle, deadline: deadline)
        // Everything was sent: from here a lost connection may leave it done.
        do {
            return try readPipeline(handle, statements, deadline: deadline)
        } catch where mayCommit && error.code == .connectionLost {
            throw PostgresError(.outcomeUnknown, error.message + " (after the request was sent: it may still be carried out)",
                                sqlState: error.sqlState, statement: error.statement)
        }
    }

    /// The results of a pipeline sent whole, then its sync; see `pipeline`.
    private func readPipeline(_ handle: OpaquePointer, _ statements: [(sql: String, params: [String?])],
                              deadline: UInt64) throws(PostgresError) -> [PGResult] {
        var results: [PGResult] = []
        var failure: PostgresError?
        for statement in statements {
            // Each statement: its result (or PIPELINE_ABORTED when an earlier one failed), then NULL.
            guard let raw = try nextResult(handle, deadline: deadline) else {
                throw PostgresError(.connectionLost, Self.errorMessage(handle), statement: Self.firstLine(statement.sql))
            }
            if PQresultStatus(raw) == PGRES_PIPELINE_ABORTED {
                PQclear(raw)
                failure = failure ?? PostgresError(.queryFailed, "skipped: an earlier statement of the pipeline failed",
                                                   statement: Self.firstLine(statement.sql))
            } else {
                do { results.append(try check(raw, statement.sql)) } catch { failure = failure ?? error }
            }
            while let extra = try nextResult(handle, deadline: deadline) { PQclear(extra) }
        }
        guard let sync = try nextResult(handle, deadline: deadline) else {
            throw PostgresError(.connectionLost, Self.errorMessage(handle))
        }
        let synced = PQresultStatus(sync) == PGRES_PIPELINE_SYNC
        PQclear(sync)
        if let failure { throw failure }
        guard synced else { throw PostgresError(.unexpectedResult, "the pipeline did not end with its sync") }
        return results
    }

    /// BEGIN, `statements`, COMMIT as one pipeline (one round trip); the results of
    /// `statements` only. When any fails, nothing was committed: the transaction is rolled
    /// back and the first failure thrown. When the connection is lost, or `timeout` passes,
    /// after the whole pipeline was sent, the error is `outcomeUnknown`: PostgreSQL may still
    /// commit it.
    ///
    /// `customPlans`: plan each statement for the values it is given this time, not once for
    /// all. Needed by statements over arrays of a batch (`unnest($1::uuid[])`): after five runs
    /// PostgreSQL may switch a prepared statement to a generic plan that cannot know the array
    /// holds 2,000 ids, and one such plan took a read storm's batch from milliseconds to 20 s of
    /// CPU. A batch runs its statements once for many requests, so planning them is cheap.
    public func pipelinedTransaction(_ statements: [(sql: String, params: [String?])],
                                     mode: String = "READ COMMITTED", customPlans: Bool = false,
                                     timeout: Double = 60) throws(PostgresError) -> [PGResult] {
        let opening: [(sql: String, params: [String?])] = [("BEGIN ISOLATION LEVEL \(mode)", [])]
            + (customPlans ? [("SET LOCAL plan_cache_mode = force_custom_plan", [])] : [])
        do {
            let results = try pipeline(opening + statements + [("COMMIT", [])], timeout: timeout,
                                       mayCommit: !mode.hasSuffix("READ ONLY"))
            return Array(results.dropFirst(opening.count).dropLast())
        } catch {
            if isHealthy { _ = try? execute("ROLLBACK") }
            throw error
        }
    }
}
