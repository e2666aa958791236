import Foundation

/// What a `FanoutEngine` asks its transport to do after an event. The transport only
/// translates these into socket calls; it decides nothing.
public enum EngineAction: Sendable {
    /// The connection has something to write (frames, a ping or a close): ask for a writable
    /// callback. Asked once per burst, when a queue turns non-empty.
    case wantWritable(Int)
    /// Close the socket now without waiting on the peer (it does not read, or it missed its
    /// close deadline). The transport must release everything it holds for it.
    case drop(Int)
    /// Stop reading this socket (its requests in flight reached their bound): the client is
    /// slowed down by TCP rather than refused. Reading resumes with `resumeReading`.
    case pauseReading(Int)
    /// Read this socket again.
    case resumeReading(Int)
    /// Run this request on a database worker and report back with `jobCompleted`.
    case run(DatabaseJob)
    /// Something an operator may want in the log.
    case notice(EngineNotice)
}

/// Events worth a log line; the engine itself does no I/O.
public enum EngineNotice: Sendable, Equatable {
    case slowClient(connection: Int, queuedFrames: Int)
    case heartbeatTimeout(connection: Int)
    case writeStalled(connection: Int)
    case accessRevoked(connection: Int, event: UUID)
    case tokenRevoked(connection: Int)
    case frameRefused(connection: Int, code: ErrorCode)
}
