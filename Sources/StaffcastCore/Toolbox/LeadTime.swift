import Foundation

/// A time before an event's start, written `Nd`, `Nh` or `Nm` (`1d`, `2h`, `30m`): what
/// `before_start` and `staffcast remind --before` take. Pure.
public struct LeadTime: Sendable, Equatable, Hashable, CustomStringConvertible {
    public var amount: Int
    public var unit: Unit

    public enum Unit: String, Sendable, CaseIterable {
        case days = "d", hours = "h", minutes = "m"

        var seconds: Int {
            switch self {
            case .days: return 86_400
            case .hours: return 3_600
            case .minutes: return 60
            }
        }
    }

    /// At most 366 days before the start.
    public static let maxSeconds = 366 * 86_400

    public init(amount: Int, unit: Unit) {
        self.amount = amount
        self.unit = unit
    }

    /// Parses `Nd`, `Nh` or `Nm` (N a whole number from 1); throws `invalid` naming the text.
    public init(parsing text: String) throws(StaffcastError) {
        let t = text.trimmingCharacters(in: .whitespaces).lowercased()
        guard let last = t.last, let unit = Unit(rawValue: String(last)),
              let n = Int(t.dropLast()), n >= 1, t.dropLast().allSatisfy(\.isASCII) else {
            throw .invalid("'\(text.prefix(40))' is not a time before the start; write it as a number and d, h or m, e.g. 1d, 2h or 30m.")
        }
        guard n <= Self.maxSeconds / unit.seconds else {
            throw .invalid("'\(text.prefix(40))' is too long before the start; at most 366 days.")
        }
        self.init(amount: n, unit: unit)
    }

    /// A comma-separated list (`1d,2h,30m`), each once, longest first.
    public static func parseList(_ text: String) throws(StaffcastError) -> [LeadTime] {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        var out: [LeadTime] = []
        for part in parts {
            let lead = try LeadTime(parsing: part)
            if out.contains(where: { $0.seconds == lead.seconds }) {
                throw .invalid("'\(part)' appears twice in '\(text.prefix(80))'; give each time once.")
            }
            out.append(lead)
        }
        guard !out.isEmpty else { throw .invalid("Give at least one time before the start, e.g. 1d,2h,30m.") }
        return out.sorted { $0.seconds > $1.seconds }
    }

    public var seconds: Int { amount * unit.seconds }

    public var description: String { "\(amount)\(unit.rawValue)" }
}
