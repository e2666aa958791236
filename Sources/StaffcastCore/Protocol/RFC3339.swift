import Foundation

/// Timestamps on the wire: RFC 3339 in UTC with milliseconds, e.g. `2026-11-21T15:47:33.120Z`.
public enum RFC3339 {
    private static let withFraction = Date.ISO8601FormatStyle(includingFractionalSeconds: true, timeZone: .gmt)
    private static let plain = Date.ISO8601FormatStyle(timeZone: .gmt)

    public static func format(_ date: Date) -> String { withFraction.format(date) }

    /// Accepts both with and without fractional seconds.
    public static func parse(_ text: String) -> Date? {
        if let d = try? withFraction.parse(text) { return d }
        return try? plain.parse(text)
    }
}
