import Foundation

/// Timestamps on the wire: RFC 3339 in UTC with milliseconds, e.g. `2026-11-21T15:47:33.120Z`.
public enum RFC3339 {
    private static let withFraction = Date.ISO8601FormatStyle(includingFractionalSeconds: true, timeZone: .gmt)
    private static let plain = Date.ISO8601FormatStyle(timeZone: .gmt)

    public static func format(_ date: Date) -> String { withFraction.format(date) }

    /// Accepts both with and without fractional seconds. A date or time that does not exist
    /// (30 February, 25:00, minute 61) is refused: Foundation's parser rolls it over into the
    /// next day or hour, so a typo would schedule an announcement at another time.
    public static func parse(_ text: String) -> Date? {
        guard fieldsExist(text) else { return nil }
        if let d = try? withFraction.parse(text) { return d }
        return try? plain.parse(text)
    }

    /// Whether the date and time of `text` (`YYYY-MM-DDTHH:MM:SS…`) are a real day and time:
    /// month 1–12, a day that month has, hour 0–23, minute 0–59, second 0–60 (RFC 3339 allows a
    /// leap second). Text of another shape is left to the parser.
    static func fieldsExist(_ text: String) -> Bool {
        let b = Array(text.utf8.prefix(19))
        guard b.count == 19, b[4] == UInt8(ascii: "-"), b[7] == UInt8(ascii: "-"),
              b[13] == UInt8(ascii: ":"), b[16] == UInt8(ascii: ":") else { return true }
        func number(_ range: Range<Int>) -> Int? {
            var n = 0
            for i in range {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(b[i]) else { return nil }
                n = n * 10 + Int(b[i] - UInt8(ascii: "0"))
            }
            return n
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
              let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19) else { return false }
        guard (1...12).contains(month), hour <= 23, minute <= 59, second <= 60 else { return false }
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
        return (1...days).contains(day)
    }
}
