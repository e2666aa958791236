/// Every key's value and where it came from, in the order of `ConfigKey.all`: what
/// `serve --check-config` and `config show` print, and what the server is built from.
public struct EffectiveConfiguration: Sendable, Equatable {
    public struct Entry: Sendable, Equatable {
        public let key: ConfigKey
        /// Nil: unset (the key has no fixed default; `key.unsetMeaning` says what happens).
        public let value: ConfigValue?
        public let source: ConfigSource
    }

    public let entries: [Entry]

    public init(entries: [Entry]) { self.entries = entries }

    public func entry(_ key: ConfigKey) -> Entry? { entries.first { $0.key.name == key.name } }
    public func value(_ key: ConfigKey) -> ConfigValue? { entry(key)?.value }
    public func source(_ key: ConfigKey) -> ConfigSource { entry(key)?.source ?? .defaultValue }

    public func integer(_ key: ConfigKey) -> Int { value(key)?.integer ?? key.defaultInteger }
    public func number(_ key: ConfigKey) -> Double { value(key)?.number ?? key.defaultNumber }
    public func flag(_ key: ConfigKey) -> Bool { value(key)?.flag ?? key.defaultFlag }
    /// The text of a key, nil when unset.
    public func text(_ key: ConfigKey) -> String? { value(key)?.text }

    /// One line a key: `  name: value   (source)`, secrets masked; an unset key shows what
    /// that means. `derived` gives the value worked out at start for an unset key (node_id…),
    /// `notes` a word after a set one (`0 (one per core: 8)`).
    public func printout(derived: [String: String] = [:], notes: [String: String] = [:]) -> [String] {
        let shown = entries.map { e -> (String, String) in
            var value: String
            if let v = e.value {
                value = e.key.shown(v)
                if let note = notes[e.key.name] { value += " (\(note))" }
            } else if let d = derived[e.key.name] {
                value = d
            } else {
                value = "(unset: \(e.key.unsetMeaning ?? "none"))"
            }
            return ("\(e.key.name): \(value)", e.source.description)
        }
        let width = min(64, shown.map(\.0.count).max() ?? 0)
        return shown.map { left, source in
            "  " + left + String(repeating: " ", count: max(1, width - left.count + 2)) + "(\(source))"
        }
    }
}
