import Foundation
import Prometheus

/// The server's Prometheus metrics, in a registry of its own (so that two servers in one test
/// process do not share counters), each with its `# HELP` text. Label sets are bounded: by
/// message type and priority, error code, HTTP method, route and status; never per user or
/// event. Every metric here is listed in docs/operations.md.
///
/// Thread-safe (the registry's metrics are); any thread records.
final class ServerMetrics: @unchecked Sendable {
    let registry = PrometheusCollectorRegistry()

    /// A histogram of seconds.
    struct Seconds: Sendable {
        let histogram: ValueHistogram
        func recordSeconds(_ seconds: Double) { histogram.record(max(0, seconds)) }
    }

    /// A histogram of counts (batch sizes).
    struct Sizes: Sendable {
        let histogram: ValueHistogram
        func record(_ value: Int) { histogram.record(Double(value)) }
    }

    static let secondsBuckets: [Double] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]
    static let sizeBuckets: [Double] = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1_024]

    /// Help text of every gauge set by name (`gauge(_:_:)`).
    static let gaugeHelp: [String: String] = [
        "staffcast_connections": "Open WebSocket connections on this server.",
        "staffcast_subscriptions": "Event subscriptions of the open connections.",
        "staffcast_database_jobs_queued": "Database requests waiting for a worker.",
        "staffcast_listener_up": "1 when the change listener is listening to the database, else 0.",
        "staffcast_database_workers": "Database worker threads.",
        "staffcast_service_loops": "Service loops (threads serving connections).",
        "staffcast_valid_tokens": "API tokens this server currently accepts.",
        "process_resident_memory_bytes": "Resident memory size in bytes.",
        "process_virtual_memory_bytes": "Virtual memory size in bytes.",
        "process_open_fds": "Open file descriptors (sockets included).",
        "process_max_fds": "The most file descriptors the process may open.",
        "process_start_time_seconds": "Start time of the process since the Unix epoch, in seconds.",
    ]

    let connectionsOpened: Counter
    /// Times a loop stopped accepting for a second, out of descriptors (`pauseAccepting`).
    let acceptPauses: Counter
    let slowClientsClosed: Counter
    let deliveries: Counter
    /// Socket writes of WebSocket frames: deliveries / writes is how many frames share a write.
    let socketWrites: Counter
    let fanoutLatency: Seconds
    let listenerBatches: Counter
    /// Listener wake-ups served without a read (only this server's own send batches, handed on).
    let listenerReadsSkipped: Counter
    /// Send batches by what the committing server did with them (`LocalFanoutOutcome`).
    let localFanout: [LocalFanoutOutcome: Counter]
    let heartbeatRTT: Seconds
    let databaseJob: Seconds
    let listenerLag: Seconds
    let sendBatchSize: Sizes
    let readBatchSize: Sizes
    /// Stage times of a sample of sends (`staffcast_stage_seconds`).
    let tracer: MessageTracer
    private let cpuSeconds: Gauge
    private let sent: LabeledCounters
    private let outboxAttempts: LabeledCounters
    private let errors: LabeledCounters
    private let httpRequests: LabeledCounters
    private let tokenLookups: LabeledCounters

    init() {
        let r = registry
        connectionsOpened = r.makeCounter(descriptor: Self.describe("staffcast_connections_opened_total", "WebSocket connections opened."))
        acceptPauses = r.makeCounter(descriptor: Self.describe("staffcast_accept_pauses_total", "Times a service loop stopped accepting connections for a second because the process was out of file descriptors or memory."))
        slowClientsClosed = r.makeCounter(descriptor: Self.describe("staffcast_slow_clients_closed_total", "Connections closed or dropped because they did not keep up with their frames."))
        deliveries = r.makeCounter(descriptor: Self.describe("staffcast_deliveries_total", "Frames written to WebSocket clients."))
        socketWrites = r.makeCounter(descriptor: Self.describe("staffcast_socket_writes_total", "Writes of WebSocket frames to sockets; several frames can share one write (deliveries / writes = frames per write)."))
        fanoutLatency = Seconds(histogram: r.makeValueHistogram(descriptor: Self.describe("staffcast_delivery_latency_seconds", "From a message's commit to its fan-out on this server (queued for every subscriber of every loop)."), buckets: Self.secondsBuckets))
        listenerBatches = r.makeCounter(descriptor: Self.describe("staffcast_listener_batches_total", "Batches of changes the listener read."))
        listenerReadsSkipped = r.makeCounter(descriptor: Self.describe("staffcast_listener_reads_skipped_total", "Listener wake-ups that needed no read: only this server's own send batches, each handed to its loops already."))
        var local: [LocalFanoutOutcome: Counter] = [:]
        for outcome in LocalFanoutOutcome.allCases {
            local[outcome] = r.makeCounter(descriptor: Self.describe("staffcast_local_fanout_batches_total",
                                                                     "Committed send batches, by whether this server handed them to its loops at once or left them to the change feed (docs/operations.md)."),
                                           labels: [("outcome", outcome.rawValue)])
        }
        localFanout = local
        heartbeatRTT = Seconds(histogram: r.makeValueHistogram(descriptor: Self.describe("staffcast_heartbeat_rtt_seconds", "WebSocket ping to pong round trips."), buckets: Self.secondsBuckets))
        databaseJob = Seconds(histogram: r.makeValueHistogram(descriptor: Self.describe("staffcast_database_job_seconds", "Time a request held a database worker."), buckets: Self.secondsBuckets))
        listenerLag = Seconds(histogram: r.makeValueHistogram(descriptor: Self.describe("staffcast_listener_lag_seconds", "From a message's commit to the listener reading it."), buckets: Self.secondsBuckets))
        sendBatchSize = Sizes(histogram: r.makeValueHistogram(descriptor: Self.describe("staffcast_send_batch_size", "Sends committed together in one transaction."), buckets: Self.sizeBuckets))
        readBatchSize = Sizes(histogram: r.makeValueHistogram(descriptor: Self.describe("staffcast_read_batch_size", "Read marks committed together in one transaction."), buckets: Self.sizeBuckets))
        tracer = MessageTracer(registry: r)
        sent = LabeledCounters(r, "staffcast_messages_sent_total", "Messages sent (committed), by type and priority.", labels: ["type", "priority"])
        outboxAttempts = LabeledCounters(r, "staffcast_outbox_attempts_total", "Outbox attempts (push, email, webhook), by kind and outcome.", labels: ["kind", "outcome"])
        errors = LabeledCounters(r, "staffcast_errors_total", "Errors answered to clients, by protocol error code.", labels: ["code"])
        httpRequests = LabeledCounters(r, "staffcast_http_requests_total", "HTTP requests answered, by method, route (templated, no ids) and status.", labels: ["method", "route", "status"])
        tokenLookups = LabeledCounters(r, "staffcast_token_lookups_total", "Database lookups of tokens this server did not know yet, by result.", labels: ["result"])
        // A gauge: the kernel's total is what it is (a counter cannot be set); the _total name
        // is the one Prometheus's own clients use.
        cpuSeconds = r.makeGauge(descriptor: Self.describe("process_cpu_seconds_total", "User and system CPU time spent, in seconds."))
        r.makeGauge(descriptor: Self.describe("staffcast_build_info", "Always 1; the label says which staffcast version runs."), labels: [("version", StaffcastVersion.current)]).set(Double(1))
    }

    /// A full metric name and its help text (the name is not split into namespace and unit).
    static func describe(_ name: String, _ help: String) -> MetricNameDescriptor {
        MetricNameDescriptor(metricName: name, unitName: "", helpText: help)
    }

    func messageSent(type: String, priority: String) {
        messagesSent(type: type, priority: priority, count: 1)
    }

    func messagesSent(type: String, priority: String, count: Int) {
        sent.counter(type, priority).increment(by: Int64(count))
    }

    /// One attempt of the outbox (push, email, webhook) and what came of it
    /// (`delivered`, `retry`, `failed`, `gone`).
    func outboxAttempt(kind: String, outcome: String) {
        outboxAttempts.counter(kind, outcome).increment()
    }

    func error(code: String) {
        errors.counter(code).increment()
    }

    func httpRequest(method: String, route: String, status: Int) {
        httpRequests.counter(method, route, String(status)).increment()
    }

    /// Lookups of tokens the table did not know (`TokenResolver`), by what came of them:
    /// valid, not_valid, failed, timeout, rate_limited, busy.
    func tokenLookup(result: String) {
        tokenLookups.counter(result).increment()
    }

    func gauge(_ label: String, _ value: Double) {
        registry.makeGauge(descriptor: Self.describe(label, Self.gaugeHelp[label] ?? "")).set(value)
    }

    /// The exposition text, process metrics read just now. Reads /proc: call it off the
    /// service loops.
    func text() -> String {
        if let p = ProcessStats.read() {
            gauge("process_resident_memory_bytes", p.residentBytes)
            gauge("process_virtual_memory_bytes", p.virtualBytes)
            gauge("process_open_fds", p.openFDs)
            gauge("process_max_fds", p.maxFDs)
            gauge("process_start_time_seconds", p.startTime)
            cpuSeconds.set(p.cpuSeconds)
        }
        return registry.emitToString()
    }
}
