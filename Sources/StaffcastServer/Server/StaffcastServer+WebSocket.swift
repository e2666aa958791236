import CLibWebSockets
import Foundation
import StaffcastCore
import StaffcastPostgres

/// The client ops of protocol v1, on the service thread. Anything that needs the database is
/// handed to a worker, which encodes the reply; the service thread only queues bytes.
extension StaffcastServer {
    /// What a database job hands back to the service thread.
    typealias Apply = @Sendable (StaffcastServer) -> Void

    /// The answer to a send over the rate limit (WebSocket per connection, HTTP per token).
    var sendRateLimited: StaffcastError {
        StaffcastError(.rateLimited, "You are sending too fast (at most \(Int(configuration.sendRatePerSecond)) messages a second after a burst of \(Int(configuration.sendBurst))); nothing was stored.")
    }

    func handleFrame(_ connection: Connection, _ bytes: [UInt8]) {
        switch ClientFrameDecoder.decode(bytes) {
        case .failure(let e):
            metrics.error(code: e.error.code.rawValue)
            logger.info("frame refused", metadata: ["conn": "\(connection.id)", "code": "\(e.error.code)"])
            send(connection, .error(ref: e.ref, e.error))
        case .success(let frame):
            dispatch(connection, frame)
        }
    }

    private func dispatch(_ connection: Connection, _ frame: ClientFrame) {
        let ref = frame.ref
        let user = connection.identity.userID
        let id = connection.id
        if draining, frame.request != .ping {
            send(connection, .error(ref: ref, .unavailable("This server is shutting down; reconnect and try again.")))
            return
        }
        switch frame.request {
        case .ping:
            send(connection, .pong(ref: ref))

        case .unsubscribe(let event):
            connection.pendingSubscribes[event] = nil
            hub.unsubscribe(id, from: event)
            send(connection, .unsubscribed(ref: ref, eventID: event))

        case .subscribe(let event, let sinceSeq):
            let generation = makeID()
            connection.pendingSubscribes[event] = generation
            runJob(connection, ref: ref) { store in
                let snapshot = try store.subscribe(as: user, event: event, sinceSeq: sinceSeq)
                let reply = OutFrame(ServerFrame.subscribed(ref: ref, event: snapshot.event, history: snapshot.history,
                                                            unreadCount: snapshot.unreadCount).encoded())
                return { server in
                    server.completeSubscribe(id, event: event, generation: generation, ref: ref, reply: reply,
                                             historyThrough: snapshot.historyThrough, accessThrough: snapshot.accessThrough)
                }
            }

        case .send(let request):
            guard connection.sendBucket.take(now: Self.monotonicNow()) else {
                send(connection, .error(ref: ref, sendRateLimited))
                return
            }
            runJob(connection, ref: ref) { [logger, metrics] store in
                let message = try store.send(as: user, request)
                metrics.messageSent(type: message.messageType.rawValue, priority: message.priority.rawValue)
                logger.info("message sent", metadata: ["message": "\(message.id)", "seq": "\(message.seq)",
                                                       "event": "\(message.eventID)", "type": "\(message.messageType.rawValue)",
                                                       "priority": "\(message.priority.rawValue)", "via": "websocket"])
                let reply = OutFrame(ServerFrame.sent(ref: ref, message: message).encoded())
                return { server in server.enqueue(to: id, reply) }
            }

        case .markRead(let messageID):
            runJob(connection, ref: ref) { store in
                let (event, unread) = try store.markRead(as: user, message: messageID)
                let reply = OutFrame(ServerFrame.read(ref: ref, messageID: messageID, eventID: event, unreadCount: unread).encoded())
                return { server in server.enqueue(to: id, reply) }
            }

        case .markNotificationRead(let notificationID):
            runJob(connection, ref: ref) { store in
                try store.markNotificationRead(as: user, notification: notificationID)
                let reply = OutFrame(ServerFrame.notificationRead(ref: ref, notificationID: notificationID).encoded())
                return { server in server.enqueue(to: id, reply) }
            }

        case .history(let event, let beforeSeq, let limit):
            runJob(connection, ref: ref) { store in
                let messages = try store.history(as: user, event: event, beforeSeq: beforeSeq, limit: limit)
                let reply = OutFrame(ServerFrame.history(ref: ref, eventID: event, messages: messages).encoded())
                return { server in server.enqueue(to: id, reply) }
            }

        case .listEvents:
            runJob(connection, ref: ref) { store in
                let reply = OutFrame(ServerFrame.events(ref: ref, events: try store.events(of: user)).encoded())
                return { server in server.enqueue(to: id, reply) }
            }
        }
    }

    /// Runs `work` on a database worker for `connection`. Failures become an `error` frame
    /// with the request's `ref`. Bounded twice: per connection (`maxInFlightPerConnection`,
    /// else `rate_limited`) and overall (the worker queue, else `unavailable`).
    func runJob(_ connection: Connection, ref: String?, _ work: @escaping @Sendable (Store) throws -> Apply) {
        guard connection.inFlight < configuration.maxInFlightPerConnection else {
            send(connection, .error(ref: ref, StaffcastError(.rateLimited,
                "Too many of your requests are still waiting for the database; wait for replies before sending more.")))
            return
        }
        connection.inFlight += 1
        let id = connection.id
        let logger = self.logger
        let metrics = self.metrics
        let accepted = workers.submit { [self] session in
            let apply: Apply
            let started = Self.monotonicNow()
            defer { metrics.databaseJob.recordSeconds(Self.monotonicNow() - started) }
            do {
                apply = try work(try session.store())
            } catch {
                let e = StaffcastError.from(error, logger: logger)
                metrics.error(code: e.code.rawValue)
                logger.info("request refused", metadata: ["conn": "\(id)", "code": "\(e.code)"])
                let reply = OutFrame(ServerFrame.error(ref: ref, e).encoded())
                apply = { server in server.enqueue(to: id, reply) }
            }
            post { [self] in
                if let connection = connections[id] {
                    connection.inFlight -= 1
                    if connection.closing != nil { lws_callback_on_writable(connection.wsi) }
                }
                apply(self)
            }
        }
        if !accepted {
            connection.inFlight -= 1
            send(connection, .error(ref: ref, .unavailable("The server is overloaded right now; nothing was done. Try again in a moment.")))
        }
    }

    /// Joins a connection to an event's channel once its `subscribed` reply is ready, lining
    /// the snapshot up with live fan-out so that nothing is missed or sent twice.
    func completeSubscribe(_ id: Int, event: UUID, generation: Int, ref: String?, reply: OutFrame,
                           historyThrough: Int64, accessThrough: Int64) {
        guard let connection = connections[id], connection.pendingSubscribes[event] == generation else { return }
        connection.pendingSubscribes[event] = nil
        let key = AccessKey(event: event, user: connection.identity.userID)
        if let change = recentAccess[key], change.seq > accessThrough, change.level == nil {
            send(connection, .error(ref: ref, .forbidden("Your access to this event has ended.")))
            return
        }
        switch hub.subscribe(id, to: event, historyThrough: historyThrough, now: Date()) {
        case .subscribed(let catchUp):
            enqueue(connection, reply)
            for frame in catchUp { enqueue(connection, frame) }
        case .lagged:
            send(connection, .error(ref: ref, .unavailable(
                "Messages arrived faster than this subscription could be lined up; subscribe again with since_seq set to the last seq you have.")))
        }
    }
}
