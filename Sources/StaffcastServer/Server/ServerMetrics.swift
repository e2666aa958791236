import CoreMetrics
import Foundation
import Prometheus

/// The server's Prometheus metrics, through swift-metrics with a registry of its own (so that
/// two servers in one test process do not share counters). Label sets are bounded: by message
/// type and priority, error code, route and status class; never per user or event.
final class ServerMetrics: @unchecked Sendable {
    let registry = PrometheusCollectorRegistry()
    private let factory: PrometheusMetricsFactory

    let connectionsOpened: CoreMetrics.Counter
    let slowClientsClosed: CoreMetrics.Counter
    let deliveries: CoreMetrics.Counter
    let fanoutLatency: CoreMetrics.Timer
    let listenerBatches: CoreMetrics.Counter
    let heartbeatRTT: CoreMetrics.Timer
    let databaseJob: CoreMetrics.Timer
    let listenerLag: CoreMetrics.Timer
    let sendBatchSize: CoreMetrics.Recorder
    let readBatchSize: CoreMetrics.Recorder

    init() {
        factory = PrometheusMetricsFactory(registry: registry)
        connectionsOpened = Counter(label: "staffcast_connections_opened_total", factory: factory)
        slowClientsClosed = Counter(label: "staffcast_slow_clients_closed_total", factory: factory)
        deliveries = Counter(label: "staffcast_deliveries_total", factory: factory)
        fanoutLatency = Timer(label: "staffcast_delivery_latency_seconds", factory: factory)
        listenerBatches = Counter(label: "staffcast_listener_batches_total", factory: factory)
        heartbeatRTT = Timer(label: "staffcast_heartbeat_rtt_seconds", factory: factory)
        databaseJob = Timer(label: "staffcast_database_job_seconds", factory: factory)
        listenerLag = Timer(label: "staffcast_listener_lag_seconds", factory: factory)
        sendBatchSize = Recorder(label: "staffcast_send_batch_size", factory: factory)
        readBatchSize = Recorder(label: "staffcast_read_batch_size", factory: factory)
    }

    func messageSent(type: String, priority: String) {
        Counter(label: "staffcast_messages_sent_total", dimensions: [("type", type), ("priority", priority)], factory: factory)
            .increment()
    }

    /// One attempt of the outbox (push, email, webhook) and what came of it
    /// (`delivered`, `retry`, `failed`, `gone`).
    func outboxAttempt(kind: String, outcome: String) {
        Counter(label: "staffcast_outbox_attempts_total", dimensions: [("kind", kind), ("outcome", outcome)], factory: factory)
            .increment()
    }

    func error(code: String) {
        Counter(label: "staffcast_errors_total", dimensions: [("code", code)], factory: factory).increment()
    }

    func httpRequest(route: String, status: Int) {
        Counter(label: "staffcast_http_requests_total", dimensions: [("route", route), ("status", "\(status)")], factory: factory)
            .increment()
    }

    /// Lookups of tokens the table did not know (`TokenResolver`), by what came of them:
    /// valid, not_valid, failed, timeout, rate_limited, busy.
    func tokenLookup(result: String) {
        Counter(label: "staffcast_token_lookups_total", dimensions: [("result", result)], factory: factory).increment()
    }

    func gauge(_ label: String, _ value: Double) {
        Gauge(label: label, factory: factory).record(value)
    }

    func text() -> String { registry.emitToString() }
}
