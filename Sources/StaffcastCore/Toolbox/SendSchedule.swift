import Foundation

/// When a scheduled send goes out: at a time (`send_at`), or some time before the event's
/// `starts_at` (`before_start`). Pure: `resolve` is given the event's start and the time now.
public enum SendSchedule: Sendable, Equatable {
    case at(Date)
    case beforeStart(LeadTime)

    /// Reads the two optional fields of a send; nil when neither is given, `invalid` when both
    /// are or one cannot be read.
    public static func from(sendAt: String?, beforeStart: String?) throws(StaffcastError) -> SendSchedule? {
        switch (sendAt, beforeStart) {
        case (nil, nil):
            return nil
        case (.some, .some):
            throw .invalid("Give send_at (a time) or before_start (e.g. 2h), not both.")
        case (let text?, nil):
            guard let date = RFC3339.parse(text) else {
                throw .invalid("send_at '\(text.prefix(60))' is not an RFC 3339 time such as 2026-06-01T09:00:00Z.")
            }
            return .at(date)
        case (nil, let text?):
            return .beforeStart(try LeadTime(parsing: text))
        }
    }

    /// The moment to send, or `invalid` with a sentence for a person: a time that has passed,
    /// or `before_start` on an event without a start time. `now` is the database's clock.
    public func resolve(eventStartsAt: Date?, now: Date) throws(StaffcastError) -> Date {
        let when: Date
        switch self {
        case .at(let date):
            when = date
            guard when > now else {
                throw .invalid("send_at \(RFC3339.format(date)) has already passed (it is now \(RFC3339.format(now))); pick a time in the future, or send it now without send_at.")
            }
        case .beforeStart(let lead):
            guard let start = eventStartsAt else {
                throw .invalid("before_start needs the event's start time, and this event has none; use send_at with a time instead.")
            }
            when = start.addingTimeInterval(-Double(lead.seconds))
            guard when > now else {
                throw .invalid("\(lead) before the start (\(RFC3339.format(start))) is \(RFC3339.format(when)), which has already passed; pick a shorter time or send it now.")
            }
        }
        guard when.timeIntervalSince(now) <= Double(LeadTime.maxSeconds) else {
            throw .invalid("\(RFC3339.format(when)) is more than a year away; schedule it closer to the time.")
        }
        return when
    }

    /// A scheduled send that goes out more than this long after its time is marked late.
    public static let lateAfterSeconds = 60.0

    public static func isLate(sendAt: Date, sentAt: Date) -> Bool {
        sentAt.timeIntervalSince(sendAt) > lateAfterSeconds
    }
}
