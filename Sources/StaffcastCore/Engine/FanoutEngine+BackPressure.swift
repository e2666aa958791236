import Foundation

/// Back-pressure on a connection that keeps many requests waiting on the database (a
/// publisher with thousands of sends in flight): at `maxInFlightPerConnection` the transport
/// is asked to stop reading its socket (`pauseReading`), so the client slows down to what
/// the database commits, and nothing it sent is refused. As answers come back, requests held
/// meanwhile run first, in arrival order, and reading resumes (`resumeReading`) once at most
/// half the window is in flight, so a busy publisher does not flip the socket per answer.
///
/// Held requests: frames the transport had already read when reading stopped (libwebsockets
/// finishes the buffer it is parsing). Bounded by `maxHeldPerConnection`: past it the
/// transport did not stop reading, and the request is refused with `rate_limited`.
extension FanoutEngine {
    /// Runs `request` now, or holds it while the connection's window is full. False (and
    /// `rate_limited` queued) only when even the held requests are at their bound.
    @discardableResult
    func run(_ connection: ConnectionState<Frame>, ref: String?, _ request: DatabaseJob.Request, now: Double,
             into actions: inout [EngineAction]) -> Bool {
        if connection.held.isEmpty, connection.inFlight < configuration.maxInFlightPerConnection {
            start(connection, ref: ref, request, into: &actions)
            return true
        }
        guard connection.held.count < configuration.maxHeldPerConnection else {
            reply(connection, .error(ref: ref, StaffcastError(.rateLimited,
                "Too many of your requests are waiting for the database (\(configuration.maxInFlightPerConnection) in flight and \(configuration.maxHeldPerConnection) more held); wait for replies before sending more.")),
                now: now, into: &actions)
            return false
        }
        connection.held.append(HeldRequest(ref: ref, request: request))
        pauseReading(connection, into: &actions)
        return true
    }

    private func start(_ connection: ConnectionState<Frame>, ref: String?, _ request: DatabaseJob.Request,
                       into actions: inout [EngineAction]) {
        connection.inFlight += 1
        actions.append(.run(DatabaseJob(connection: connection.id, ref: ref, identity: connection.identity, request: request)))
        if connection.inFlight >= configuration.maxInFlightPerConnection { pauseReading(connection, into: &actions) }
    }

    /// After an answer: held requests run while the window has room; reading resumes once
    /// nothing is held and at most half the window is in flight.
    func runHeld(_ connection: ConnectionState<Frame>, now: Double, into actions: inout [EngineAction]) {
        guard connection.isOpen else { return }
        while connection.inFlight < configuration.maxInFlightPerConnection, !connection.held.isEmpty {
            let next = connection.held.removeFirst()
            start(connection, ref: next.ref, next.request, into: &actions)
        }
        if connection.readingPaused, connection.held.isEmpty,
           connection.inFlight <= configuration.maxInFlightPerConnection / 2 {
            connection.readingPaused = false
            actions.append(.resumeReading(connection.id))
        }
    }

    /// A connection starts closing: what it still holds never runs. While draining
    /// (`answered`) each gets `unavailable`, like requests that arrive then; reading resumes so
    /// the peer's close frame is read.
    func releaseHeld(_ connection: ConnectionState<Frame>, answered: Bool, now: Double, into actions: inout [EngineAction]) {
        let held = connection.held
        connection.held = []
        if answered {
            for request in held {
                reply(connection, .error(ref: request.ref, .unavailable("This server is shutting down; reconnect and try again.")),
                      now: now, into: &actions)
            }
        }
        if connection.readingPaused {
            connection.readingPaused = false
            actions.append(.resumeReading(connection.id))
        }
    }

    private func pauseReading(_ connection: ConnectionState<Frame>, into actions: inout [EngineAction]) {
        guard !connection.readingPaused else { return }
        connection.readingPaused = true
        actions.append(.pauseReading(connection.id))
    }
}

/// A request read while its connection's window was full, waiting to run.
struct HeldRequest {
    var ref: String?
    var request: DatabaseJob.Request
}
