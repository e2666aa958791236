/// How urgently staff should look; drives banner colour and the terminal bell.
public enum Priority: String, Sendable, CaseIterable, Codable, Comparable {
    case low, normal, high, urgent

    private var rank: Int {
        switch self {
        case .low: return 0
        case .normal: return 1
        case .high: return 2
        case .urgent: return 3
        }
    }

    public static func < (a: Priority, b: Priority) -> Bool { a.rank < b.rank }
}
