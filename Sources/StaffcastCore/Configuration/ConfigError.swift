/// A configuration that cannot be used: it names the key and where the bad value came from,
/// in one sentence for a person.
public enum ConfigError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A config file key that no declaration has (a typo, or a key of a newer version).
    case unknownKey(String, path: String)
    /// A flag that is not a setting (`--databse-workers`).
    case unknownFlag(String)
    /// A flag given without its value.
    case missingValue(flag: String)
    /// The config file is not a mapping of key: value.
    case notAMapping(path: String)
    /// A value that does not fit its key: `reason` says what it must be.
    case invalid(key: String, source: ConfigSource, reason: String)

    public var description: String {
        switch self {
        case .unknownKey(let key, let path):
            if let near = ConfigKey.suggestion(for: key) {
                return "config file \(path): unknown key '\(key)' (did you mean '\(near.name)'? every key: docs/configuration.md)"
            }
            return "config file \(path): unknown key '\(key)' (known keys: \(ConfigKey.all.map(\.name).sorted().joined(separator: ", ")))"
        case .unknownFlag(let flag):
            if flag.hasPrefix("--"), let near = ConfigKey.suggestion(for: String(flag.dropFirst(2))) {
                return "unknown option '\(flag)' (did you mean '\(near.flagName)'? every setting's flag is listed by staffcast serve --help)"
            }
            return "unknown option '\(flag)' (every setting's flag is listed by staffcast serve --help)"
        case .missingValue(let flag):
            return "\(flag) needs a value"
        case .notAMapping(let path):
            return "config file \(path) must be a mapping of key: value"
        case .invalid(let key, let source, let reason):
            return "\(source.errorPrefix): '\(key)' \(reason)"
        }
    }

    /// The key the error is about, when it is about one.
    public var key: String? {
        switch self {
        case .unknownKey(let key, _), .invalid(let key, _, _): return key
        default: return nil
        }
    }
}
