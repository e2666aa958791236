/// How one attempt at a delivery ended, as the policy sees it (the transport only reports the
/// status code or the failure). Pure.
public enum AttemptResult: Sendable, Equatable {
    /// The other side answered with this HTTP status (SMTP: 250 for accepted, the reply code
    /// otherwise); `reply` says more when it refused (the SMTP server's reply line, a redirect's
    /// Location), for the log and the stored reason.
    case status(Int, retryAfterSeconds: Double? = nil, reply: String? = nil)
    /// No answer: connection refused, TLS failure, timeout… (retried).
    case transportFailure(String)
    /// Not attempted, and never to be: the destination may no longer be sent to (a push whose
    /// subscription's token ended). Says why.
    case withdrawn(String)
}

/// What to do with a delivery after an attempt.
public enum DeliveryOutcome: Sendable, Equatable {
    /// Done: the other side took it.
    case delivered
    /// The destination is gone for good (push 404/410): forget it (the subscription).
    case gone
    /// Try again at this time (seconds since 1970).
    case retry(at: Double)
    /// No more attempts (a permanent refusal, or the time limit passed).
    case failed(reason: String)
}
