/// What one loop saw while opening connections.
struct OpenStats {
    var requested = 0
    var opened = 0
    var subscribed = 0
    var failed = 0
    var subscribeRetries = 0
    var firstConnectNs: Int64 = 0
    var lastSubscribedNs: Int64 = 0
    var failures: [String: Int] = [:]

    mutating func fail(_ reason: String) {
        failed += 1
        failures[reason, default: 0] += 1
    }
}
