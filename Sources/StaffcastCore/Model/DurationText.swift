/// Durations as every command line option writes them: a whole number and a unit, `30m`,
/// `2h`, `3d` (minutes, hours, days). Where an option used to take a plain number of minutes
/// (`send --expires 30`), a plain number still means minutes. Pure.
public enum DurationText {
    /// Seconds in `text`, or nil when it is not a duration (or not from 1 unit to `maxSeconds`).
    public static func seconds(_ text: String, plainMinutes: Bool, maxSeconds: Int = 3_650 * 86_400) -> Int? {
        guard let last = text.last, !text.isEmpty else { return nil }
        let digits: Substring
        let unit: Int
        switch last {
        case "m": digits = text.dropLast(); unit = 60
        case "h": digits = text.dropLast(); unit = 3_600
        case "d": digits = text.dropLast(); unit = 86_400
        default:
            guard plainMinutes else { return nil }
            digits = Substring(text); unit = 60
        }
        guard !digits.isEmpty, digits.count <= 9, digits.allSatisfy({ $0.isASCII && $0.isNumber }),
              let n = Int(digits), n >= 1, n <= maxSeconds / unit else { return nil }
        return n * unit
    }

    /// Whole minutes in `text` (see `seconds`).
    public static func minutes(_ text: String, plainMinutes: Bool = true) -> Int? {
        seconds(text, plainMinutes: plainMinutes).map { $0 / 60 }
    }
}
