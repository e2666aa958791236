import Foundation
import Logging

/// A fixed set of threads, each owning one `PGConnection`, that run database jobs so the
/// WebSocket service thread never waits on PostgreSQL.
///
/// Jobs go through one bounded queue (`queueCapacity`); when it is full `submit` returns false
/// and the caller answers `unavailable` at once rather than queueing without bound. A job
/// posts its own result back to whoever needs it (the server wakes its loop with
/// `lws_cancel_service`). A connection that breaks is dropped and made again for the next job.
public final class DatabaseWorkers: @unchecked Sendable {
    /// Lent to a job for the duration of one call, on the worker's own thread.
    public final class Session {
        let conninfo: String
        var connection: PGConnection?

        init(conninfo: String) { self.conninfo = conninfo }

        /// The worker's connection, (re)connecting when there is none.
        public func store() throws(PostgresError) -> Store {
            if let connection, connection.isHealthy { return Store(connection) }
            connection = nil
            let c = try PGConnection(conninfo: conninfo)
            connection = c
            return Store(c)
        }

        /// Call after an error: forgets a connection that is no longer usable.
        public func dropIfBroken() {
            if let connection, !connection.isHealthy { self.connection = nil }
        }
    }

    public typealias Job = @Sendable (Session) -> Void

    private let queue: BlockingQueue<Job>
    private var threads: [Thread] = []
    private let finished = DispatchGroup()
    public let conninfo: String
    public let count: Int

    public init(conninfo: String, count: Int, queueCapacity: Int = 10_000) {
        self.conninfo = conninfo
        self.count = count
        self.queue = BlockingQueue(capacity: queueCapacity)
    }

    public func start() {
        for i in 0..<count {
            finished.enter()
            let queue = self.queue
            let conninfo = self.conninfo
            let group = finished
            let thread = Thread {
                let session = Session(conninfo: conninfo)
                while let job = queue.take() {
                    job(session)
                    session.dropIfBroken()
                }
                session.connection = nil
                group.leave()
            }
            thread.name = "staffcast-db-\(i)"
            thread.start()
            threads.append(thread)
        }
    }

    /// Queues `job`; false when the queue is full (or stopped).
    public func submit(_ job: @escaping Job) -> Bool { queue.offer(job) }

    public var queued: Int { queue.count }

    /// Lets queued jobs finish, then ends the threads; waits at most `timeout` seconds.
    @discardableResult
    public func stop(timeout: TimeInterval = 5) -> Bool {
        queue.close()
        return finished.wait(timeout: .now() + timeout) == .success
    }
}
