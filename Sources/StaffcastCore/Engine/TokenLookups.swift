/// Tokens the in-memory `TokenTable` does not know yet, checked once against the database off
/// the service loops, so a token works on its first use on every server instead of only once
/// the token change log has reached this one (docs/architecture.md, "Fresh tokens").
///
/// It decides; it does no I/O. For an unknown digest `begin` says whether to look it up now
/// (the first asker), to wait for the lookup under way (later askers: one lookup per digest),
/// or to refuse without asking the database:
/// - a digest looked up and found not valid in the last `negativeTTL` seconds: `notValid`
///   (a client retrying a wrong or revoked token costs the database nothing);
/// - an address that started more than `burst` lookups, refilled at `perSecond`: `rateLimited`
///   (guessing tokens stays bounded per address; many staff behind one NAT joining at once
///   stay well inside it: redeeming an invite is limited far harder);
/// - `maxInFlight` lookups already under way, or `maxWaiters` waiting on this one: `busy`.
/// `finish` hands back the waiters of a lookup; `expire` those still waiting at its deadline.
/// Every collection is bounded. Pure: the caller passes monotonic seconds and guards the one
/// instance with a lock.
public struct TokenLookups<Waiter> {
    public enum Start {
        /// Look the digest up now; `id` names the lookup for `expire`.
        case lookUp(id: Int)
        /// A lookup of it is under way; the waiter is told when it ends.
        case joined
        case refused(Refusal)
    }

    public enum Refusal: Equatable, Sendable {
        case notValid, rateLimited, busy
    }

    public struct Limits: Sendable, Equatable {
        public var perSecond = 20.0
        public var burst = 100.0
        public var maxAddresses = 10_000
        public var maxInFlight = 64
        public var maxWaiters = 256
        public var negativeTTL = 10.0
        public var maxRemembered = 10_000
        public init() {}
    }

    public let limits: Limits
    private var addresses: RedeemLimiter
    private var pending: [TokenDigest: (id: Int, waiters: [Waiter])] = [:]
    private var notValidUntil: [TokenDigest: Double] = [:]
    private var nextID = 1
    /// Lookups started and not finished (expired ones too, until their job returns).
    public private(set) var inFlight = 0

    public init(limits: Limits = Limits()) {
        self.limits = limits
        addresses = RedeemLimiter(perSecond: limits.perSecond, burst: limits.burst, maxAddresses: limits.maxAddresses)
    }

    /// Digests waiting for a lookup.
    public var pendingCount: Int { pending.count }
    /// Digests remembered as not valid.
    public var rememberedCount: Int { notValidUntil.count }

    public mutating func begin(_ digest: TokenDigest, address: String, now: Double, waiter: Waiter) -> Start {
        if let until = notValidUntil[digest] {
            if now < until { return .refused(.notValid) }
            notValidUntil[digest] = nil
        }
        if var entry = pending[digest] {
            guard entry.waiters.count < limits.maxWaiters else { return .refused(.busy) }
            entry.waiters.append(waiter)
            pending[digest] = entry
            return .joined
        }
        // Every new digest an address asks about counts, looked up or not.
        guard addresses.allow(address, now: now) else { return .refused(.rateLimited) }
        guard inFlight < limits.maxInFlight else { return .refused(.busy) }
        let id = nextID
        nextID += 1
        inFlight += 1
        pending[digest] = (id, [waiter])
        return .lookUp(id: id)
    }

    /// The lookup `id` of `digest` returned: `valid` is what it found (nil: it failed, and
    /// nothing is remembered). Returns who waits on it (nobody when its deadline passed
    /// first). A digest not valid is remembered for `negativeTTL`.
    public mutating func finish(_ digest: TokenDigest, id: Int, valid: Bool?, now: Double) -> [Waiter] {
        inFlight = max(0, inFlight - 1)
        if valid == false { remember(digest, now: now) }
        guard let entry = pending[digest], entry.id == id else { return [] }
        pending[digest] = nil
        return entry.waiters
    }

    /// The deadline of lookup `id` passed: returns who still waits on it (to be told the token
    /// could not be checked). Its job may still return later; `finish` counts it then.
    public mutating func expire(_ digest: TokenDigest, id: Int) -> [Waiter] {
        guard let entry = pending[digest], entry.id == id else { return [] }
        pending[digest] = nil
        return entry.waiters
    }

    /// The lookup could not be started (the job queue was full): returns its waiters, and it
    /// no longer counts as in flight.
    public mutating func abandon(_ digest: TokenDigest, id: Int) -> [Waiter] {
        guard let entry = pending[digest], entry.id == id else { return [] }
        inFlight = max(0, inFlight - 1)
        pending[digest] = nil
        return entry.waiters
    }

    private mutating func remember(_ digest: TokenDigest, now: Double) {
        if notValidUntil[digest] == nil, notValidUntil.count >= limits.maxRemembered {
            notValidUntil = notValidUntil.filter { $0.value > now }
            if notValidUntil.count >= limits.maxRemembered { notValidUntil.removeAll(keepingCapacity: true) }
        }
        notValidUntil[digest] = now + limits.negativeTTL
    }
}

extension TokenLookups: Sendable where Waiter: Sendable {}
