extension ConfigKey {
    /// The declared key a mistyped name most likely meant (`heartbeat` → `heartbeat_interval`,
    /// `databse_workers` → `database_workers`), or nil when none is close.
    public static func suggestion(for name: String, keys: [ConfigKey] = all) -> ConfigKey? {
        let wanted = name.lowercased().replacingOccurrences(of: "-", with: "_")
        if let containing = keys.filter({ $0.name.contains(wanted) || wanted.contains($0.name) })
            .min(by: { $0.name.count < $1.name.count }), wanted.count >= 4 {
            return containing
        }
        let scored = keys.map { ($0, editDistance(wanted, $0.name)) }.min { $0.1 < $1.1 }
        guard let (key, distance) = scored, distance <= max(2, wanted.count / 4) else { return nil }
        return key
    }

    /// Levenshtein distance: insertions, deletions and substitutions of characters.
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
}
