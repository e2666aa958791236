/// Counters kept by the service thread for `/v1/status` and logs.
struct ServerStats {
    var connectionsOpened = 0
    var connectionsClosed = 0
    var slowClientsClosed = 0
    var messagesFannedOut = 0
    var deliveries = 0
    var httpRequests = 0
    var heartbeatTimeouts = 0
}
