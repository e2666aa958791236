import CLibWebSockets
import Foundation
import StaffcastCore
import StaffcastPostgres

/// The HTTP API (CONTRACT.md §3) on the WebSocket's port, on the service thread. Requests
/// that need the database run on a worker; the answer is written from `HTTP_WRITEABLE`.
extension StaffcastServer {
    func httpRequest(_ wsi: OpaquePointer, _ user: UnsafeMutableRawPointer?, _ path: String) -> Int32 {
        let id = makeID()
        user?.storeBytes(of: id, as: Int.self)
        let query = LWSTransport.query(wsi)
        let exchange = HTTPExchange(id: id, wsi: wsi, method: LWSTransport.method(wsi), path: path, query: query,
                                    bearerToken: LWSTransport.bearerToken(wsi, query: query),
                                    contentType: LWSTransport.header(wsi, WSI_TOKEN_HTTP_CONTENT_TYPE) ?? "")
        exchanges[id] = exchange
        stats.httpRequests += 1
        if path == "/v1/ws" {
            respond(id, .error(.invalid("This is the WebSocket endpoint: connect with a WebSocket client (subprotocol staffcast.v1).")))
            return 0
        }
        switch HTTPRoute.match(method: exchange.method, path: path) {
        case .failure(.notFound):
            respond(id, .error(.notFound("There is no \(exchange.method) \(path). See docs/protocol.md for the HTTP API.")))
        case .failure(.methodNotAllowed(let allowed)):
            var response = HTTPResponse.error(.invalid("\(path) answers \(allowed), not \(exchange.method)."))
            response.status = 405
            respond(id, response)
        case .failure(.badID(let text)):
            respond(id, .error(.invalid("'\(text.prefix(64))' in the path is not a UUID.")))
        case .success(let route):
            exchange.route = route
            let length = LWSTransport.header(wsi, WSI_TOKEN_HTTP_CONTENT_LENGTH).flatMap { Int($0) } ?? 0
            if exchange.method != "POST" || length == 0 {
                exchange.dispatched = true
                dispatchHTTP(exchange, route)
            } else if length > Limits.maxFrameBytes {
                respond(id, .error(StaffcastError(.tooLarge, "The body is \(length) bytes; the limit is \(Limits.maxFrameBytes).")))
            }
        }
        return 0
    }

    func httpBody(_ user: UnsafeMutableRawPointer?, _ input: UnsafeMutableRawPointer?, _ length: Int) {
        guard let exchange = exchanges[Self.sessionID(user)], let input, length > 0 else { return }
        if exchange.body.count + length > Limits.maxFrameBytes {
            exchange.bodyTooLarge = true
        } else {
            exchange.body.append(contentsOf: UnsafeRawBufferPointer(start: input, count: length))
        }
    }

    func httpBodyComplete(_ user: UnsafeMutableRawPointer?) {
        guard let exchange = exchanges[Self.sessionID(user)], !exchange.dispatched, exchange.response == nil,
              let route = exchange.route else { return }
        exchange.dispatched = true
        if exchange.bodyTooLarge {
            respond(exchange.id, .error(StaffcastError(.tooLarge, "The body is larger than \(Limits.maxFrameBytes) bytes.")))
            return
        }
        dispatchHTTP(exchange, route)
    }

    func httpWritable(_ wsi: OpaquePointer, _ user: UnsafeMutableRawPointer?) -> Int32 {
        let id = Self.sessionID(user)
        guard let exchange = exchanges[id], let response = exchange.response else { return 0 }
        exchanges[id] = nil
        metrics.httpRequest(route: exchange.route?.label ?? "other", status: response.status)
        if response.status >= 400 { metrics.error(code: ErrorCode.all.first { $0.httpStatus == response.status }?.rawValue ?? "http_\(response.status)") }
        logger.debug("http", metadata: ["method": "\(exchange.method)", "path": "\(exchange.path)", "status": "\(response.status)",
                                        "ms": "\(Int(Date().timeIntervalSince(exchange.startedAt) * 1000))"])
        return LWSTransport.writeResponse(wsi, response, headOnly: exchange.method == "HEAD")
    }

    func httpDropped(_ user: UnsafeMutableRawPointer?) {
        exchanges[Self.sessionID(user)] = nil
    }

    /// Sets the answer of an exchange that may still be open, and asks to write it.
    func respond(_ id: Int, _ response: HTTPResponse) {
        guard let exchange = exchanges[id], exchange.response == nil else { return }
        exchange.response = response
        lws_callback_on_writable(exchange.wsi)
    }

    private func dispatchHTTP(_ exchange: HTTPExchange, _ route: HTTPRoute) {
        let id = exchange.id
        switch route {
        case .healthz:
            respond(id, .json(200, ["status": "ok", "node": configuration.nodeID]))
        case .readyz:
            let r = readiness
            respond(id, .json(r.ready ? 200 : 503, r))
        case .metrics:
            if configuration.metricsRequireToken, exchange.bearerToken == nil || exchange.bearerToken != configuration.opsToken {
                respond(id, .error(StaffcastError(.unauthorized, "/metrics needs the ops token as a bearer token.")))
                return
            }
            respond(id, .text(200, metricsText(), contentType: "text/plain; version=0.0.4; charset=utf-8"))
        case .status:
            let events = Array(hub.subscriberCounts.keys)
            runHTTPOnLoop(exchange, allowOpsToken: true) { store, identity in
                if let identity, try !store.isOwnerOfAnyEvent(identity.userID) {
                    throw StaffcastError.forbidden("Status is for owners of an event or the ops token.")
                }
                let latency = try store.ping()
                let facts = try store.eventFacts(events)
                return { server in .json(200, server.statusSnapshot(facts: facts, databaseLatency: latency)) }
            }
        case .eventStatus(let eventID):
            let node = configuration.nodeID
            runHTTPOnLoop(exchange, allowOpsToken: true) { store, identity in
                let roster = try store.roster(event: eventID, asUser: identity?.userID)
                let elsewhere = try store.presence(event: eventID, excludingNode: node)
                return { server in .json(200, server.eventStatus(eventID, roster: roster, elsewhere: elsewhere)) }
            }
        case .sendMessage(let eventID):
            if let token = exchange.bearerToken, !token.isEmpty {
                let now = Self.monotonicNow()
                if httpSendBuckets.count > 10_000 { httpSendBuckets.removeAll(keepingCapacity: true) }
                var bucket = httpSendBuckets[token]
                    ?? TokenBucket(perSecond: configuration.sendRatePerSecond, burst: configuration.sendBurst, now: now)
                let allowed = bucket.take(now: now)
                httpSendBuckets[token] = bucket
                guard allowed else {
                    respond(id, .error(sendRateLimited))
                    return
                }
            }
            let request: SendRequest
            do {
                request = try HTTPBodies.sendRequest(eventID: eventID, contentType: exchange.contentType,
                                                     body: exchange.body, query: exchange.query)
            } catch {
                respond(id, .error(error))
                return
            }
            runHTTP(exchange) { [logger, metrics] store, identity in
                let message = try store.send(as: identity.userID, request)
                metrics.messageSent(type: message.messageType.rawValue, priority: message.priority.rawValue)
                logger.info("message sent", metadata: ["message": "\(message.id)", "seq": "\(message.seq)",
                                                       "event": "\(message.eventID)", "type": "\(message.messageType.rawValue)",
                                                       "priority": "\(message.priority.rawValue)", "via": "http"])
                return .json(201, message)
            }
        case .listMessages(let eventID):
            let since: Int64?
            let limit: Int64?
            do {
                since = try HTTPBodies.intParameter(exchange.query, "since_seq", range: 0...Int64.max)
                limit = try HTTPBodies.intParameter(exchange.query, "limit", range: 1...Int64(Limits.maxHistoryLimit))
            } catch {
                respond(id, .error(error))
                return
            }
            runHTTP(exchange) { store, identity in
                let messages: [StaffMessage]
                if let since {
                    messages = try store.messages(as: identity.userID, event: eventID, sinceSeq: since,
                                                  limit: Int(limit ?? Int64(Limits.maxHistoryLimit)))
                } else {
                    messages = try store.history(as: identity.userID, event: eventID, beforeSeq: nil,
                                                 limit: Int(limit ?? Int64(Limits.defaultHistoryLimit)))
                }
                return .json(200, ["messages": messages])
            }
        case .receipts(let messageID):
            runHTTP(exchange) { store, identity in
                .json(200, ReceiptsBody(try store.receipts(as: identity.userID, message: messageID)))
            }
        case .notify(let userID):
            let request: NotificationRequest
            do {
                request = try HTTPBodies.notificationRequest(userID: userID, body: exchange.body)
            } catch {
                respond(id, .error(error))
                return
            }
            runHTTP(exchange) { store, identity in
                .json(201, try store.createNotification(as: identity.userID, request))
            }
        case .myNotifications:
            let unreadOnly = exchange.query["unread"] == "true"
            runHTTP(exchange) { store, identity in
                .json(200, ["notifications": try store.notifications(as: identity.userID, unreadOnly: unreadOnly)])
            }
        case .myEvents:
            runHTTP(exchange) { store, identity in
                .json(200, ["events": try store.events(of: identity.userID)])
            }
        }
    }

    /// Authenticates the bearer token and runs `work` on a database worker; any failure becomes
    /// the JSON error body with its status.
    private func runHTTP(_ exchange: HTTPExchange, _ work: @escaping @Sendable (Store, Identity) throws -> HTTPResponse) {
        runHTTPOnLoop(exchange, allowOpsToken: false) { store, identity in
            // Without the ops token `runHTTPOnLoop` always has an identity.
            guard let identity else { throw StaffcastError(.unauthorized, "The token is not valid.") }
            let response = try work(store, identity)
            return { _ in response }
        }
    }

    /// Like `runHTTP`, for answers that also need the service thread's state: `work` runs on a
    /// worker (identity nil when `allowOpsToken` and the ops token was used) and returns what
    /// builds the response on the service thread.
    private func runHTTPOnLoop(_ exchange: HTTPExchange, allowOpsToken: Bool,
                               _ work: @escaping @Sendable (Store, Identity?) throws -> @Sendable (StaffcastServer) -> HTTPResponse) {
        let id = exchange.id
        guard !draining else {
            respond(id, .error(.unavailable("This server is shutting down; try again in a moment.")))
            return
        }
        let isOps = allowOpsToken && configuration.opsToken != nil && exchange.bearerToken == configuration.opsToken
        let token = exchange.bearerToken ?? ""
        guard isOps || !token.isEmpty else {
            respond(id, .error(StaffcastError(.unauthorized, allowOpsToken
                ? "Send Authorization: Bearer TOKEN (an owner's token or the ops token)."
                : "No token: send the header Authorization: Bearer TOKEN (staffcast admin token issue makes one).")))
            return
        }
        let logger = self.logger
        let accepted = workers.submit { [self] session in
            let build: @Sendable (StaffcastServer) -> HTTPResponse
            do {
                let store = try session.store()
                var identity: Identity?
                if !isOps {
                    guard let found = try store.authenticate(token: token) else {
                        throw StaffcastError(.unauthorized, "The token is not valid. Ask an organiser for a new one.")
                    }
                    identity = found
                }
                build = try work(store, identity)
            } catch {
                let response = HTTPResponse.error(StaffcastError.from(error, logger: logger))
                build = { _ in response }
            }
            post { [self] in respond(id, build(self)) }
        }
        if !accepted {
            respond(id, .error(.unavailable("The server is overloaded right now; nothing was done. Try again in a moment.")))
        }
    }
}
