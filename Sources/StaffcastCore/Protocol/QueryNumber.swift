/// A whole-number query parameter (`limit`, `offset`, `since_seq`…), read and range-checked the
/// same way on every route, so a bad value is a 400 that names the parameter and its range. Pure.
public enum QueryNumber {
    /// The value of `name`, nil when absent or empty; `invalid` when not a whole number in `range`.
    public static func read(_ query: [String: String], _ name: String, _ range: ClosedRange<Int64>) throws(StaffcastError) -> Int64? {
        guard let raw = query[name], !raw.isEmpty else { return nil }
        guard let value = Int64(raw), range.contains(value) else {
            throw .invalid("\(name) must be a whole number from \(range.lowerBound) to \(range.upperBound); got '\(raw.prefix(40))'.")
        }
        return value
    }
}
