import Foundation

/// Message traffic to a set of subscribers.
struct TrafficSummary {
    var subscribers = 0
    var publish = PublishResult()
    var deliveries = 0
    var duplicates = 0
    var stale = 0
    var lost = 0
    var lostOnClosed = 0
    var missedSubscribers = 0
    var unackedReceived = 0
    var closedByServer: [Int: Int] = [:]
    var errors: [String: Int] = [:]
    var pings = 0
    var sendToReceipt = Histogram()
    var commitToReceipt = Histogram()
    var lastDeliveryNs: Int64 = 0
    var complete = false
    var serverCPU = 0.0
    var postgresCPU = 0.0
    var clientCPU = 0.0
    /// Deliveries per server (three-servers: in the order of --subscriber-ports).
    var perServer: [Int] = []

    /// Deliveries per second from the first send to the last delivery.
    var deliveriesPerSecond: Double {
        let span = Double(lastDeliveryNs - publish.firstSendNs) / 1e9
        return span > 0 ? Double(deliveries) / span : 0
    }

    var lossText: String {
        var t = "lost \(grouped(lost + lostOnClosed)), dup \(grouped(duplicates))"
        if lostOnClosed > 0 { t += " (\(grouped(lostOnClosed)) on subscribers the server closed)" }
        if missedSubscribers > 0 { t += ", \(grouped(missedSubscribers)) subscribers missed some" }
        if !closedByServer.isEmpty {
            t += ", server closed " + closedByServer.sorted { $0.key < $1.key }
                .map { "\($0.value)× \($0.key == -1 ? "without close frame" : String($0.key))" }.joined(separator: ", ")
        }
        if !errors.isEmpty { t += ", errors to subscribers " + errors.map { "\($0.value)× \($0.key)" }.joined(separator: ", ") }
        return t
    }

    var publisherProblems: String {
        var t: [String] = []
        let p = publish
        if !p.errors.isEmpty { t.append("publisher errors " + p.errors.sorted { $0.value > $1.value }.map { "\($0.value)× \($0.key)" }.joined(separator: ", ")) }
        if p.unanswered > 0 { t.append("\(p.unanswered) sends unanswered") }
        if p.reconnects > 0 { t.append("\(p.reconnects) HTTP reconnects") }
        if let f = p.failure { t.append("publisher: \(f)") }
        if unackedReceived > 0 { t.append("\(grouped(unackedReceived)) deliveries of unacknowledged messages") }
        if !complete { t.append("deliveries stopped before every subscriber had every message") }
        return t.joined(separator: "; ")
    }
}
