/// What the sources said, before anything is checked: the flags, the environment and the
/// config file. The command line gathers them (the I/O); `ConfigResolver` decides.
public struct ConfigLayers: Sendable, Equatable {
    /// Flag values by key name, each with the flag as it was spelled (`--workers` or `--database-workers`).
    public var flags: [String: FlagValue] = [:]
    /// The process environment (only `STAFFCAST_…` names of keys are read; empty counts as unset).
    public var environment: [String: String]
    /// The config file's path and its values by key, when there is one.
    public var filePath: String?
    public var file: [String: ConfigInput]

    public init(environment: [String: String] = [:], filePath: String? = nil, file: [String: ConfigInput] = [:]) {
        self.environment = environment
        self.filePath = filePath
        self.file = file
    }

    /// Sets a flag's value (the flag as the person wrote it, for the printout and errors).
    public mutating func setFlag(_ key: ConfigKey, _ value: String, spelled flag: String? = nil) {
        flags[key.name] = FlagValue(flag: flag ?? key.flagName, value: value)
    }

    /// Reads `--key value`, `--key=value` (and a bare `--flag` for true/false keys) from `arguments`,
    /// by the keys' flag names and their former spellings.
    public mutating func readFlags(_ arguments: [String], keys: [ConfigKey] = ConfigKey.all) throws(ConfigError) {
        var i = 0
        while i < arguments.count {
            let argument = arguments[i]
            i += 1
            let (flag, inline) = Self.split(argument)
            guard flag.hasPrefix("--"), let key = keys.first(where: { $0.flagName == flag || $0.formerFlags.contains(flag) }) else {
                throw .unknownFlag(flag)
            }
            if let inline {
                setFlag(key, inline, spelled: flag)
            } else if key.kind == .flag, i == arguments.count || arguments[i].hasPrefix("--") {
                setFlag(key, "true", spelled: flag) // `--metrics-require-token` alone means true
            } else {
                guard i < arguments.count else { throw .missingValue(flag: flag) }
                setFlag(key, arguments[i], spelled: flag)
                i += 1
            }
        }
    }

    private static func split(_ argument: String) -> (String, String?) {
        guard let eq = argument.firstIndex(of: "=") else { return (argument, nil) }
        return (String(argument[..<eq]), String(argument[argument.index(after: eq)...]))
    }
}

/// A flag's value, with the flag as the person spelled it.
public struct FlagValue: Sendable, Equatable {
    public let flag: String
    public let value: String
}
