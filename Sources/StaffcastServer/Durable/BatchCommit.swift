import Foundation
import Logging
import StaffcastCore
import StaffcastPostgres

/// How every group commit settles a batch (`SendBatcher`, `ReadBatcher`,
/// `RequestBatcher`: answers and notifications), written once: commit the batch together; an item
/// the batch could not decide (nil) is asked again alone for its own precise answer; when the
/// whole transaction failed it rolled back (nothing of the batch was stored), so every item is
/// asked again alone, except when the database is unreachable (each gets `unavailable` at
/// once) or the batcher has no way to ask alone (each gets the batch's error).
///
/// Runs on the database worker that committed the batch; `done` is called exactly once per
/// item, in batch order.
struct BatchCommit<Item, Value>: Sendable {
    /// The kind of item, for the log ("send", "notification").
    let name: String
    let logger: Logger
    let metrics: ServerMetrics

    func settle(_ batch: [Item], _ session: DatabaseWorkers.Session,
                together: (Store, [Item]) throws -> [Result<Value, StaffcastError>?],
                alone: ((Store, Item) throws -> Value)? = nil,
                done: (Item, Result<Value, StaffcastError>) -> Void) {
        let started = ServiceLoop.monotonicNow()
        defer { metrics.databaseJob.recordSeconds(ServiceLoop.monotonicNow() - started) }
        func answer(_ item: Item, _ result: Result<Value, StaffcastError>) {
            if case .failure(let e) = result { metrics.error(code: e.code.rawValue) }
            done(item, result)
        }
        func failAll(_ error: Error) {
            let e = StaffcastError.from(error, logger: logger)
            for item in batch { answer(item, .failure(e)) }
        }
        let store: Store
        do {
            store = try session.store()
        } catch {
            failAll(error)
            return
        }
        func one(_ item: Item) {
            guard let alone else { return answer(item, .failure(StaffcastError(.internal, "The server could not decide this request."))) }
            do {
                answer(item, .success(try alone(store, item)))
            } catch {
                answer(item, .failure(StaffcastError.from(error, logger: logger)))
            }
        }
        do {
            let results = try together(store, batch)
            for (item, result) in zip(batch, results) {
                if let result { answer(item, result) } else { one(item) }
            }
        } catch {
            session.dropIfBroken()
            if alone == nil || (error as? PostgresError)?.isConnectionProblem == true { return failAll(error) }
            // Rolled back: nothing of the batch was stored. Each again, alone, so that a bad one fails by itself.
            logger.warning("\(name) batch failed; one by one", metadata: ["error": "\(error)", "size": LogValue.number(batch.count)])
            for item in batch { one(item) }
        }
    }
}
