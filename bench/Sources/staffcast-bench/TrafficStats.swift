/// What one loop saw of message traffic in a scenario.
struct TrafficStats {
    var deliveries = 0
    var duplicates = 0
    var stale = 0
    var historyMessages = 0
    var firstDeliveryNs: Int64 = 0
    var lastDeliveryNs: Int64 = 0
    var pings = 0
    var errors: [String: Int] = [:]
    var revoked = 0
    var closedByServer: [Int: Int] = [:]
    /// Deliveries per server (three-servers: an index into the loop's ports).
    var perServer: [Int] = []
    /// Publisher's send (monotonic stamp in the text) → receipt, µs precision.
    var sendToReceipt = Histogram()
    /// Message `sent_at` (PostgreSQL transaction start, ms on the wire) → receipt.
    var commitToReceipt = Histogram()
}
