import Foundation

/// When messages escalate (docs/protocol.md, Emergencies): the default for emergencies, how
/// many rounds at most, and the test/ops knob that shortens the interval to seconds. Pure.
public struct EscalationPolicy: Sendable, Equatable {
    /// `escalate_after_minutes` given to an emergency sent without one; nil: emergencies do not
    /// escalate unless asked. Config key `escalate_after_minutes` (default 5).
    public var emergencyDefaultMinutes: Int? = ConfigKey.escalateAfterMinutes.defaultInteger
    /// Rounds at most per message. Config key `max_escalation_rounds` (default 3).
    public var maxRounds = ConfigKey.maxEscalationRounds.defaultInteger
    /// Test/ops knob (config key `escalation_interval_seconds`): when set, every escalating
    /// message's interval is this many seconds instead of its `escalate_after_minutes`.
    public var intervalSecondsOverride: Int?
    /// How often a server looks for due rounds, in seconds.
    public var checkEverySeconds = 1.0

    public init() {}

    /// The request as it is stored: an emergency without its own `escalate_after_minutes`
    /// gets the default.
    public func applyingDefault(to request: SendRequest) -> SendRequest {
        guard request.escalateAfterMinutes == nil, request.messageType == .emergency,
              let minutes = emergencyDefaultMinutes else { return request }
        var r = request
        r.escalateAfterMinutes = minutes
        return r
    }

    /// Seconds between rounds of a message that escalates after `minutes`.
    public func intervalSeconds(minutes: Int) -> Int {
        intervalSecondsOverride ?? minutes * 60
    }

    /// What happens to one due escalation, given who has not read it yet (of those who had
    /// access when it was sent and still have it).
    public enum Decision: Equatable, Sendable {
        /// Run round `round`: remind `unread`, tell the admins; `last` when no round follows.
        case round(Int, unread: [UUID], last: Bool)
        case finish(reason: String)
    }

    public func decide(roundsDone: Int, unread: [UUID], expired: Bool, retracted: Bool) -> Decision {
        if retracted { return .finish(reason: "retracted") }
        if expired { return .finish(reason: "expired") }
        if unread.isEmpty { return .finish(reason: "all_read") }
        if roundsDone >= maxRounds { return .finish(reason: "max_rounds") }
        let round = roundsDone + 1
        return .round(round, unread: unread, last: round >= maxRounds)
    }
}
