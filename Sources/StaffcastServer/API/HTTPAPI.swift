import Foundation
import Logging
import StaffcastCore
import StaffcastPostgres
import Synchronization

/// The HTTP API (docs/protocol.md, HTTP API) on the WebSocket's port. Called by a service loop with a
/// whole request; it answers through `respond`, at once for what memory knows and from a
/// database worker otherwise. It never blocks the calling loop: tokens are checked against the
/// gatekeeper's table in memory, and every query runs on a worker.
final class HTTPAPI: @unchecked Sendable {
    typealias Respond = @Sendable (HTTPResponse) -> Void

    /// The server's lifecycle state and readiness (read only).
    let health: ServerHealth
    /// The service loops, asked for snapshots (status, metrics, reach).
    let loops: LoopDirectory
    /// The bodies of status, metrics and reach.
    let reports: StatusReports
    /// The VAPID application server key (base64url), when push is configured.
    let pushPublicKey: String?
    let configuration: ServerConfiguration
    private let gatekeeper: Gatekeeper
    let workers: DatabaseWorkers
    private let sends: SendBatcher
    /// Group commit of poll answers, shared with the WebSocket path.
    let answers: AnswerBatcher
    /// The reply and poll-answer rate limit, shared with the WebSocket path.
    let replyLimits: ReplyLimits
    /// Group commit of notifications; only this API creates them.
    private let notifications: NotificationBatcher
    let logger: Logger
    let metrics: ServerMetrics
    /// A connection's requests that go to a worker run in the order they came (pipelined
    /// edits ran side by side, and an earlier one could stick).
    private let order: ConnectionOrder
    /// The connection whose request is being dispatched (`handle`'s `connection`), read by
    /// `runOnWorker`; bound only while a request is dispatched on its loop's thread.
    @TaskLocal static var dispatchingFor: Int?
    /// Send rate per bearer token (the WebSocket has one per connection). Bounded: emptied
    /// past 10,000 tokens.
    private let sendBuckets = Mutex<[String: TokenBucket]>([:])

    init(configuration: ServerConfiguration, health: ServerHealth, loops: LoopDirectory, pushPublicKey: String?,
         gatekeeper: Gatekeeper, workers: DatabaseWorkers, sends: SendBatcher, answers: AnswerBatcher,
         replyLimits: ReplyLimits, logger: Logger, metrics: ServerMetrics) {
        self.sends = sends
        self.answers = answers
        self.replyLimits = replyLimits
        notifications = NotificationBatcher(.notifications, workers: workers, capacity: configuration.jobQueueCapacity, logger: logger, metrics: metrics)
        self.health = health
        self.loops = loops
        self.pushPublicKey = pushPublicKey
        reports = StatusReports(configuration: configuration, health: health, workers: workers, gatekeeper: gatekeeper,
                                metrics: metrics)
        self.configuration = configuration
        self.gatekeeper = gatekeeper
        self.workers = workers
        order = ConnectionOrder(workers: workers)
        self.logger = logger
        self.metrics = metrics
    }

    /// Wrong invite codes per client address (redeeming needs no token), and the codes known live.
    let redeemLimiter = Mutex(RedeemLimiter())

    /// `refusal`: the token could not be checked (`TokenResolver`); answered as is. `connection`
    /// (unique on this server): the requests of one connection that need a worker run in the
    /// order they came; nil: in any order.
    func handle(_ request: HTTPRequest, peer: String = "", refusal: StaffcastError? = nil, connection: Int? = nil,
                respond: @escaping Respond) {
        let head = request.head
        let started = ServiceLoop.monotonicNow()
        let metrics = self.metrics
        let logger = self.logger
        let matched = HTTPRoute.match(method: head.method, path: head.path)
        // The label is "METHOD /path": method and route become separate labels. Worked out here,
        // not in the answer, which may run on the worker that commits a whole batch.
        let route = (try? matched.get())?.label ?? "other"
        let parts = route.split(separator: " ", maxSplits: 1)
        let routeLabel = parts.count == 2 ? String(parts[1]) : route
        let methodLabel = HTTPAPI.methodLabel(head.method)
        let answer: Respond = { response in
            metrics.httpRequest(method: methodLabel, route: routeLabel, status: response.status)
            if response.status >= 400 {
                metrics.error(code: ErrorCode.all.first { $0.httpStatus == response.status }?.rawValue ?? "http_\(response.status)")
            }
            logger.debug("http", metadata: ["method": "\(head.method)", "path": "\(head.path)", "status": "\(response.status)",
                                            "ms": "\(Int((ServiceLoop.monotonicNow() - started) * 1000))"])
            respond(response)
        }
        if let refusal {
            answer(.error(refusal))
            return
        }
        if head.path == "/v1/ws" {
            answer(.error(.invalid("This is the WebSocket endpoint: connect with a WebSocket client (subprotocol staffcast.v1).")))
            return
        }
        switch matched {
        case .failure(.notFound):
            answer(.error(.notFound("There is no \(head.method) \(head.path). See docs/protocol.md for the HTTP API.")))
        case .failure(.methodNotAllowed(let allowed)):
            var response = HTTPResponse.error(.invalid("\(head.path) answers \(allowed), not \(head.method)."))
            response.status = 405
            response.allow = allowed
            answer(response)
        case .failure(.badID(let text)):
            answer(.error(.invalid("'\(text.prefix(64))' in the path is not a UUID.")))
        case .success(let route):
            Self.$dispatchingFor.withValue(connection) { dispatch(route, request, peer: peer, answer) }
        }
    }

    private func dispatch(_ route: HTTPRoute, _ request: HTTPRequest, peer: String, _ respond: @escaping Respond) {
        let head = request.head
        let token = head.bearerToken
        switch route {
        case .openAPI, .healthz, .readyz, .metrics, .status, .eventStatus, .reach:
            ops(route, request, bearer: token, respond)
        case .sendMessage(let eventID):
            let contentType = head.header("content-type") ?? ""
            guard let send = decoded(respond, try HTTPBodies.sendRequest(eventID: eventID, contentType: contentType,
                                                                          body: request.body, query: head.query)) else { return }
            guard acceptsRequests(respond) else { return }
            guard let token, let identity = gatekeeper.identity(for: token) else {
                respond(.error(gatekeeper.refusal(for: token)))
                return
            }
            // Counted once it is a valid send of a known token; given back when it was refused
            // unavailable (the database down, overloaded: nothing was looked at). A refusal
            // the database decided (forbidden, a duplicate) counts: each cost a transaction.
            guard takeSendToken(token) else {
                respond(.error(FanoutEngine<OutFrame>.sendRateLimited(configuration.engine)))
                return
            }
            let respond: Respond = { [weak self] response in
                if response.status == ErrorCode.unavailable.httpStatus { self?.giveBackSendToken(token) }
                respond(response)
            }
            if send.schedule != nil {
                // For later: stored now (202), sent by a scheduler pass at its time.
                runAsUser(token, respond) { store, identity in .json(202, try store.schedule(as: identity.userID, send)) }
                return
            }
            let accepted = sends.submit(sender: identity.userID, send, via: "http") { result in
                switch result {
                case .success(let message):
                    // Written straight into bytes: this runs on the worker that committed the batch.
                    respond(HTTPResponse(status: 201, contentType: "application/json", body: message.jsonBytes + [0x0A]))
                case .failure(let e): respond(.error(e))
                }
            }
            if !accepted {
                respond(.error(.unavailable("The server is overloaded right now; nothing was stored. Try again in a moment.")))
            }
        case .listMessages(let eventID) where MessageSearch.isSearch(head.query) || MessageSearch.listingProblem(head.query) != nil:
            if let problem = MessageSearch.listingProblem(head.query) { return respond(.error(problem)) }
            guard let search: MessageSearch = decoded(respond, try MessageSearch(query: head.query)) else { return }
            runAsUser(token, respond) { store, identity in
                let found = try store.search(as: identity.userID, event: eventID, search)
                return .json(200, MessagesPage(messages: found.messages, more: found.more))
            }
        case .editMessage(let messageID):
            guard let text: String = decoded(respond, try HTTPBodies.editText(contentType: head.header("content-type") ?? "",
                                                                           body: request.body, query: head.query)) else { return }
            runAsUser(token, respond) { store, identity in
                .json(200, try store.editMessage(as: identity.userID, messageID: messageID, text: text))
            }
        case .createTemplate(let eventID):
            guard let made: (name: String, send: SendRequest) = decoded(respond, try HTTPBodies.templateRequest(eventID: eventID, body: request.body)) else { return }
            runAsUser(token, respond) { store, identity in
                .json(201, try store.createTemplate(as: identity.userID, name: made.name, made.send))
            }
        case .listTemplates(let eventID):
            listAsUser("templates", token, respond) { try $0.templates(as: $1, event: eventID) }
        case .deleteTemplate(let eventID, let name):
            deleteAsUser(name, token, respond) { try $0.deleteTemplate(as: $1, event: eventID, name: name) }
        case .replies(let messageID):
            let csv = CSVReports.wanted(head)
            runAsUser(token, respond) { store, identity in
                let replies = try store.replies(as: identity.userID, messageID: messageID)
                return csv ? CSVReports.replies(replies, messageID: messageID) : .json(200, ["replies": replies])
            }
        case .retractMessage(let messageID):
            runAsUser(token, respond) { store, identity in
                _ = try store.retractMessage(as: identity.userID, messageID: messageID)
                return .json(200, RetractedBody(messageID: messageID))
            }
        case .listScheduled(let eventID):
            listAsUser("scheduled", token, respond) { try $0.scheduledSends(as: $1, event: eventID) }
        case .cancelScheduled(let id):
            runAsUser(token, respond) { store, identity in
                .json(200, try store.cancelScheduled(as: identity.userID, id: id))
            }
        case .listMessages(let eventID):
            let since: Int64?
            let limit: Int64?
            do {
                since = try HTTPBodies.intParameter(head.query, "since_seq", range: 0...Int64.max)
                limit = try HTTPBodies.intParameter(head.query, "limit", range: 1...Int64(Limits.maxHistoryLimit))
            } catch {
                respond(.error(error))
                return
            }
            runAsUser(token, respond) { store, identity in
                if let since {
                    let n = Int(limit ?? Int64(Limits.maxHistoryLimit))
                    let page = try store.messages(as: identity.userID, event: eventID, sinceSeq: since, limit: n + 1)
                    return .json(200, MessagesPage(messages: Array(page.prefix(n)), more: page.count > n))
                }
                let n = Int(limit ?? Int64(Limits.defaultHistoryLimit))
                let page = try store.history(as: identity.userID, event: eventID, beforeSeq: nil, limit: n + 1)
                return .json(200, MessagesPage(messages: Array(page.suffix(n)), more: page.count > n))
            }
        case .receipts(let messageID):
            let csv = CSVReports.wanted(head)
            guard let limit: Int? = decoded(respond, try ReceiptsPage.limit(query: head.query, csv: csv)) else { return }
            runAsUser(token, respond) { store, identity in
                let receipts = try store.receipts(as: identity.userID, message: messageID)
                if csv { return CSVReports.receipts(receipts) }
                let body = limit.map { ReceiptsBody(ReceiptsPage(receipts, limit: $0)) } ?? ReceiptsBody(receipts)
                return HTTPResponse(status: 200, contentType: "application/json", body: body.jsonBytes)
            }
        case .notify(let userID):
            guard let notification: NotificationRequest = decoded(respond, try HTTPBodies.notificationRequest(userID: userID, body: request.body)) else { return }
            guard let identity = caller(token, respond) else { return }
            let accepted = notifications.submit(Store.PendingNotification(sender: identity.userID, request: notification)) { result in
                switch result {
                case .success(let stored): respond(.json(201, stored))
                case .failure(let e): respond(.error(e))
                }
            }
            if !accepted {
                respond(.error(.unavailable("The server is overloaded right now; nothing was stored. Try again in a moment.")))
            }
        case .myNotifications:
            let unreadOnly = head.query["unread"] == "true"
            listAsUser("notifications", token, respond) { try $0.notifications(as: $1, unreadOnly: unreadOnly) }
        case .myEvents:
            listAsUser("events", token, respond) { try $0.events(of: $1) }
        case .createTeam, .listTeams, .deleteTeam, .teamMembers, .teamMember, .zoneCheckin, .answers, .audit:
            teams(route, request, bearer: token, respond)
        case .createInvite, .revokeInvite, .redeemInvite:
            invites(route, request, peer: peer, bearer: token, respond)
        case .pushKey, .addPushSubscription, .pushSubscriptions, .deletePushSubscription, .webhooks, .deleteWebhook, .webhookDeliveries:
            reach(route, request, bearer: token, respond)
        case .web(let asset):
            respond(asset.response(ifNoneMatch: head.header("if-none-match")))
        case .userTokens(let userID):
            userTokens(userID, tokenID: nil, method: head.method, bearer: token, respond)
        case .userToken(let userID, let tokenID):
            userTokens(userID, tokenID: tokenID, method: head.method, bearer: token, respond)
        }
    }

    /// Checks the bearer token from memory, then runs `work` as its user on a database worker;
    /// any failure becomes the JSON error body with its status.
    /// The user a bearer token belongs to, from the gatekeeper's table in memory; nil after
    /// answering 401 when there is none.
    func caller(_ token: String?, _ respond: Respond) -> Identity? {
        guard let token, !token.isEmpty else {
            respond(.error(StaffcastError(.unauthorized,
                "No token: send the header Authorization: Bearer TOKEN (staffcast admin token issue makes one).")))
            return nil
        }
        guard let found = gatekeeper.identity(for: token) else {
            respond(.error(gatekeeper.refusal(for: token)))
            return nil
        }
        return found
    }

    func runAsUser(_ token: String?, _ respond: @escaping Respond,
                           _ work: @escaping @Sendable (Store, Identity) throws -> HTTPResponse) {
        runAsUserThenLoops(token, respond) { store, identity, done in done(try work(store, identity)) }
    }

    /// Answers 200 with `{"<key>": list}`, the list that `read` gets with the store and the
    /// token's user id.
    func listAsUser<T: Encodable>(_ key: String, _ token: String?, _ respond: @escaping Respond,
                                  _ read: @escaping @Sendable (Store, UUID) throws -> T) {
        runAsUser(token, respond) { store, identity in .json(200, [key: try read(store, identity.userID)]) }
    }

    /// Answers 200 with `{"deleted": name}` once `delete` (with the store and the token's user
    /// id) removed what `name` names (a template, a team).
    func deleteAsUser(_ name: String, _ token: String?, _ respond: @escaping Respond,
                      _ delete: @escaping @Sendable (Store, UUID) throws -> Void) {
        runAsUser(token, respond) { store, identity in
            try delete(store, identity.userID)
            return .json(200, ["deleted": name])
        }
    }

    /// What `decode` makes of a request's body; nil after answering with its error (400).
    func decoded<T>(_ respond: Respond, _ decode: @autoclosure () throws(StaffcastError) -> T) -> T? {
        do {
            return try decode()
        } catch {
            respond(.error(error))
            return nil
        }
    }

    /// False once it has answered 503: a draining server takes no new work (the client retries
    /// on another one).
    func acceptsRequests(_ respond: Respond) -> Bool {
        guard health.isDraining else { return true }
        respond(.error(.unavailable("This server is shutting down; try again in a moment.")))
        return false
    }

    /// `runAsUser` for answers that also need the loops' state: `work` calls `done` once.
    func runAsUserThenLoops(_ token: String?, _ respond: @escaping Respond,
                                    _ work: @escaping @Sendable (Store, Identity, @escaping Respond) throws -> Void) {
        runOnWorker(token, allowOpsToken: false, respond) { store, identity, done in
            // Without the ops token `runOnWorker` always has an identity.
            guard let identity else { throw StaffcastError(.unauthorized, "The token is not valid.") }
            try work(store, identity, done)
        }
    }

    /// Takes one send of `token`'s rate limit (per token, as per connection on the WebSocket).
    private func takeSendToken(_ token: String) -> Bool {
        let now = ServiceLoop.monotonicNow()
        return sendBuckets.withLock { buckets in
            if buckets.count > 10_000 { buckets.removeAll(keepingCapacity: true) }
            var bucket = buckets[token] ?? TokenBucket(perSecond: configuration.sendRatePerSecond, burst: configuration.sendBurst, now: now)
            let ok = bucket.take(now: now)
            buckets[token] = bucket
            return ok
        }
    }

    /// Gives back a send refused before anything was looked at (`refundsRateLimit`).
    private func giveBackSendToken(_ token: String) {
        let now = ServiceLoop.monotonicNow()
        sendBuckets.withLock { buckets in
            guard var bucket = buckets[token] else { return }
            bucket.giveBack(now: now)
            buckets[token] = bucket
        }
    }

    /// Whether `token` is the configured ops token (an empty setting is no token): the one rule
    /// for /metrics, /v1/status and the routes that take it.
    func isOpsToken(_ token: String?) -> Bool {
        guard let ops = configuration.opsToken, !ops.isEmpty else { return false }
        return token == ops
    }

    /// Like `runAsUser`, for answers that also need the loops' state: `work` runs on a worker
    /// (identity nil when `allowOpsToken` and the ops token was used) and calls `done` once,
    /// from any thread.
    func runOnWorker(_ token: String?, allowOpsToken: Bool, _ respond: @escaping Respond,
                             _ work: @escaping @Sendable (Store, Identity?, @escaping Respond) throws -> Void) {
        guard acceptsRequests(respond) else { return }
        let isOps = allowOpsToken && isOpsToken(token)
        var identity: Identity?
        if !isOps {
            guard let token, !token.isEmpty else {
                respond(.error(StaffcastError(.unauthorized, allowOpsToken
                    ? "Send Authorization: Bearer TOKEN (an owner's token or the ops token)."
                    : "No token: send the header Authorization: Bearer TOKEN (staffcast admin token issue makes one).")))
                return
            }
            guard let found = gatekeeper.identity(for: token) else {
                respond(.error(gatekeeper.refusal(for: token)))
                return
            }
            identity = found
        }
        let logger = self.logger
        let caller = identity
        let job: DatabaseWorkers.Job = { session in
            do {
                try work(try session.store(), caller, respond)
            } catch {
                session.dropIfBroken()
                respond(.error(StaffcastError.from(error, logger: logger)))
            }
        }
        let accepted = Self.dispatchingFor.map { order.submit(connection: $0, job) } ?? workers.submit(job)
        if !accepted {
            respond(.error(.unavailable("The server is overloaded right now; nothing was done. Try again in a moment.")))
        }
    }
}

extension HTTPAPI {
    /// The request method as a metric label: one of the methods HTTP defines, else "other"
    /// (a label must not take whatever a client sends).
    static func methodLabel(_ method: String) -> String {
        ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"].contains(method) ? method : "other"
    }
}
