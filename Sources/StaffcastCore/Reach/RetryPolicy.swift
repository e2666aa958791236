import Foundation

/// The one retry policy of the outbox (push, email and webhooks): exponential backoff with
/// jitter, bounded by each kind's time limit (a push until its TTL, a webhook 24 h, an email
/// until the message expires or 6 h). Pure: the caller gives the clock and the random source.
public struct RetryPolicy: Sendable, Equatable {
    /// The first retry waits about this long (seconds); each later one twice as long.
    public var baseDelay: Double = 1
    /// No single wait is longer than this (seconds), per kind.
    public var maxDelay: [DeliveryKind: Double] = [.push: 300, .email: 600, .webhook: 1_800]
    /// How long after being queued a kind is still worth delivering (seconds); the row's own
    /// `give_up_at` (a push's TTL, a message's expiry) may be earlier.
    public static let lifetime: [DeliveryKind: Double] = [.push: 86_400, .email: 6 * 3_600, .webhook: 86_400]

    public init() {}

    /// The wait before retry number `attempt` (1 = the first retry): base·2^(attempt−1), capped,
    /// then scaled by `jitter` (from 0 to 1) into [½, 1] of it, so servers that failed together do
    /// not all come back together.
    public func delay(kind: DeliveryKind, attempt: Int, jitter: Double) -> Double {
        let exponent = Double(min(max(attempt - 1, 0), 40))
        let raw = min(baseDelay * pow(2, exponent), maxDelay[kind] ?? 300)
        return raw * (0.5 + 0.5 * min(max(jitter, 0), 1))
    }

    /// The decision after attempt number `attempts` (from 1) ended with `result`, at `now`;
    /// nothing is retried past `giveUpAt`. A server's `Retry-After` is honoured up to the cap.
    public func decide(kind: DeliveryKind, result: AttemptResult, attempts: Int, now: Double, giveUpAt: Double,
                       jitter: Double) -> DeliveryOutcome {
        let reason: String
        switch result {
        case .status(let code, let retryAfter, let reply):
            let said = reply.map { ": \($0)" } ?? ""
            switch Self.classify(kind: kind, status: code) {
            case .delivered: return .delivered
            case .gone: return .gone
            case .permanent: return .failed(reason: "refused with \(code)\(said)")
            case .transient:
                reason = "answered \(code)\(said)"
                if let retryAfter, retryAfter > 0 {
                    let at = now + min(retryAfter, maxDelay[kind] ?? 300)
                    return at <= giveUpAt ? .retry(at: at) : .failed(reason: "\(reason); out of time")
                }
            }
        case .transportFailure(let why):
            reason = why
        case .withdrawn(let why):
            return .failed(reason: why)
        }
        let at = now + delay(kind: kind, attempt: attempts, jitter: jitter)
        return at <= giveUpAt ? .retry(at: at) : .failed(reason: "\(reason); out of time after \(attempts) attempts")
    }

    enum Class { case delivered, gone, transient, permanent }

    /// Push (RFC 8030): 2xx taken; 404/410 the subscription is gone; 429 and 5xx retried; any
    /// other 4xx is our fault and would fail again. Webhooks: 2xx taken, 3xx final (redirects
    /// are not followed, and retrying for a day would hold up the webhook's later deliveries),
    /// anything else retried (the receiver may be mid-deploy). Email: the SMTP reply (2xx taken,
    /// 4xx retried, 5xx not).
    static func classify(kind: DeliveryKind, status: Int) -> Class {
        if (200..<300).contains(status) { return .delivered }
        switch kind {
        case .push:
            if status == 404 || status == 410 { return .gone }
            if status == 429 || status >= 500 { return .transient }
            return .permanent
        case .webhook:
            return (300..<400).contains(status) ? .permanent : .transient
        case .email:
            return (400..<500).contains(status) ? .transient : .permanent
        }
    }
}
