import Prometheus
import Synchronization

/// The counters of one metric, one per set of label values, each made the first time its
/// values are seen and then kept. Making a counter through the registry builds its descriptor
/// and looks it up under the registry's lock; in a send's profile that was ~1.5 % of the
/// server's CPU per send (`staffcast_messages_sent_total` and `staffcast_http_requests_total`
/// made on every batch and request). A kept counter costs one dictionary lookup under a lock of
/// its own. Label values are bounded by the caller (ServerMetrics says which labels exist).
///
/// Thread-safe: any thread counts.
final class LabeledCounters: Sendable {
    private let registry: PrometheusCollectorRegistry
    private let name: String
    private let help: String
    private let labelNames: [String]
    private let made = Mutex<[[String]: Counter]>([:])

    init(_ registry: PrometheusCollectorRegistry, _ name: String, _ help: String, labels: [String]) {
        self.registry = registry
        self.name = name
        self.help = help
        self.labelNames = labels
    }

    /// The counter for these label values, in the order of `labels`.
    func counter(_ values: String...) -> Counter {
        made.withLock { made in
            if let counter = made[values] { return counter }
            let counter = registry.makeCounter(descriptor: ServerMetrics.describe(name, help),
                                               labels: Array(zip(labelNames, values)))
            made[values] = counter
            return counter
        }
    }
}
