import Foundation
import Logging
import StaffcastCore
import StaffcastPostgres
import Synchronization

/// Fresh tokens work at once: a well-formed bearer token that the gatekeeper's table does not
/// know (issued a moment ago, its change not yet read by this server's listener) is looked up
/// once on a database worker, and the request or upgrade waits for the answer (at most
/// `deadline` seconds) instead of getting 401. What is found goes into the table
/// (`Gatekeeper.learn`), so later requests are decided from memory as before.
///
/// Bounded and rate limited by `TokenLookups` (pure): one lookup per digest at a time, at most
/// 64 at once (503 past that), 100 per client address then 20 a second (429 past that), a token found not
/// valid is answered 401 from memory for 10 s. A lookup past its deadline, or one that cannot
/// be queued, is answered 503 (the token could not be checked; nothing was done).
///
/// Called on service loops; the lookup runs on a worker, and waiters are called on the
/// worker's thread (or the deadline timer's), where they only post back to their loop.
final class TokenResolver: Sendable {
    enum Outcome: Sendable {
        /// Decide from the table as usual (the token is in it now, or it is not valid: 401).
        case proceed
        /// Answer with this error; nothing was done.
        case refuse(StaffcastError)
    }

    enum Check: Sendable {
        case decided(Outcome)
        /// A lookup is under way; `then` will be called once with the outcome.
        case pending
    }

    typealias Waiter = @Sendable (Outcome) -> Void

    private let lookups: Mutex<TokenLookups<Waiter>>
    private let gatekeeper: Gatekeeper
    private let workers: DatabaseWorkers
    private let logger: Logger
    private let metrics: ServerMetrics
    private let opsToken: String?
    /// Seconds a request waits for its lookup.
    let deadline: Double

    init(gatekeeper: Gatekeeper, workers: DatabaseWorkers, opsToken: String?, logger: Logger, metrics: ServerMetrics,
         limits: TokenLookups<Waiter>.Limits = .init(), deadline: Double = 3) {
        self.gatekeeper = gatekeeper
        self.workers = workers
        self.opsToken = opsToken.flatMap { $0.isEmpty ? nil : $0 }
        self.logger = logger
        self.metrics = metrics
        self.deadline = deadline
        lookups = Mutex(TokenLookups(limits: limits))
    }

    static let rateLimited = StaffcastError(.rateLimited,
        "Too many unknown tokens from your address; wait a few seconds and try again with a valid token.")
    static let unchecked = StaffcastError.unavailable(
        "The token could not be checked right now (the database is slow or busy); nothing was done. Try again in a moment.")

    /// Whether the request with `token` from `peer` can be decided now, or waits for a lookup
    /// (then `then` is called once, from another thread). Costs a dictionary lookup for a
    /// known token, an absent one, or one that is not a staffcast token at all.
    func check(_ token: String?, peer: String, then: @escaping Waiter) -> Check {
        guard let token, token != opsToken, TokenHasher.looksValid(token) else { return .decided(.proceed) }
        let digest = TokenHasher.digest(of: token)
        if gatekeeper.isValid(digest) { return .decided(.proceed) }
        let start = lookups.withLock { $0.begin(digest, address: peer, now: Monotonic.now(), waiter: then) }
        switch start {
        case .refused(.notValid):
            return .decided(.proceed)
        case .refused(.rateLimited):
            metrics.tokenLookup(result: "rate_limited")
            return .decided(.refuse(Self.rateLimited))
        case .refused(.busy):
            metrics.tokenLookup(result: "busy")
            return .decided(.refuse(Self.unchecked))
        case .joined:
            return .pending
        case .lookUp(let id):
            lookUp(digest, id: id)
            return .pending
        }
    }

    private func lookUp(_ digest: TokenDigest, id: Int) {
        let deadline = self.deadline
        DispatchQueue.global().asyncAfter(deadline: .now() + deadline) { [self] in
            let late = lookups.withLock { $0.expire(digest, id: id) }
            if !late.isEmpty {
                metrics.tokenLookup(result: "timeout")
                logger.warning("a token lookup did not finish in time", metadata: ["deadline_s": "\(deadline)", "waiting": "\(late.count)"])
            }
            for waiter in late { waiter(.refuse(Self.unchecked)) }
        }
        let queued = workers.submit { [self] session in
            var valid: Bool?
            do {
                let found = try session.store().lookupToken(digest)
                valid = gatekeeper.learn(found.record, digest: digest, through: found.through)
            } catch {
                session.dropIfBroken()
                logger.debug("token lookup failed", metadata: ["error": "\(error)"])
            }
            metrics.tokenLookup(result: valid.map { $0 ? "valid" : "not_valid" } ?? "failed")
            let waiters = lookups.withLock { $0.finish(digest, id: id, valid: valid, now: Monotonic.now()) }
            for waiter in waiters { waiter(valid == nil ? .refuse(Self.unchecked) : .proceed) }
        }
        if !queued {
            metrics.tokenLookup(result: "busy")
            for waiter in lookups.withLock({ $0.abandon(digest, id: id) }) { waiter(.refuse(Self.unchecked)) }
        }
    }
}
