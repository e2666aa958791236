/// A set of subscribers being connected and subscribed.
struct OpenSummary {
    var requested = 0
    var subscribed = 0
    var failed = 0
    var retries = 0
    var failures: [String: Int] = [:]
    /// First connect() → last `subscribed` reply.
    var wallSeconds: Double?
    var timedOut = false
    /// PostgreSQL's CPU while connecting (the subscribe snapshots).
    var postgresCPU = 0.0
    var rssBeforeKiB = 0
    var rssAfterKiB = 0
    var serverCPU = 0.0
    var clientCPU = 0.0

    var failureText: String {
        failures.sorted { $0.value > $1.value }.prefix(3).map { "\($0.value)× \($0.key)" }.joined(separator: "; ")
    }
}
