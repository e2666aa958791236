extension ConfigKey {
    /// The declared key a mistyped name most likely meant (`heartbeat` → `heartbeat_interval`,
    /// `databse_workers` → `database_workers`), or nil when none is close.
    public static func suggestion(for name: String, keys: [ConfigKey] = all) -> ConfigKey? {
        let wanted = name.lowercased().replacingOccurrences(of: "-", with: "_")
        if let containing = keys.filter({ $0.name.contains(wanted) || wanted.contains($0.name) })
            .min(by: { $0.name.count < $1.name.count }), wanted.count >= 4 {
            return containing
        }
        let scored = keys.map { ($0, EditDistance.between(wanted, $0.name)) }.min { $0.1 < $1.1 }
        guard let (key, distance) = scored, distance <= max(2, wanted.count / 4) else { return nil }
        return key
    }
}
