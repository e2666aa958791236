import Foundation

/// How one person was reached by one message (the delivery funnel): `live` (subscribed to the
/// event on some server when it was committed), `push` (a push service took it), `email` (the
/// SMTP server took it), with when.
public struct Reached: Sendable, Equatable, Codable {
    public static let channels = ["live", "push", "email"]

    public var via: String
    @WireDate public var at: Date

    public init(via: String, at: Date) {
        self.via = via
        self.at = at
    }
}

/// The funnel's totals for one message: how many people were reached each way, and read it.
public struct FunnelTotals: Sendable, Equatable, Codable {
    public var live = 0
    public var push = 0
    public var email = 0
    public var read = 0

    public init(live: Int = 0, push: Int = 0, email: Int = 0, read: Int = 0) {
        self.live = live
        self.push = push
        self.email = email
        self.read = read
    }

    /// Counts people (each at most once per channel) from their `reached` lists.
    public init(reached: [[Reached]], read: Int) {
        for list in reached {
            let ways = Set(list.map(\.via))
            if ways.contains("live") { live += 1 }
            if ways.contains("push") { push += 1 }
            if ways.contains("email") { email += 1 }
        }
        self.read = read
    }
}
