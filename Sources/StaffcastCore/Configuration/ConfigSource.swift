/// Where a configuration value came from. Precedence: flag > environment > file > default.
public enum ConfigSource: Sendable, Hashable, CustomStringConvertible {
    case defaultValue
    case file(path: String)
    case environment(name: String)
    case flag(name: String)

    /// `default`, `file PATH`, `env STAFFCAST_X` or `flag --x`: the printout's last column.
    public var description: String { named(file: "file", environment: "env") }

    /// How an error names the place to fix: `config file PATH`, `environment variable X`, `flag --x`.
    public var errorPrefix: String { named(file: "config file", environment: "environment variable") }

    /// The source with its path or name, a file and the environment called as given.
    private func named(file: String, environment: String) -> String {
        switch self {
        case .defaultValue: return "default"
        case .file(let path): return "\(file) \(path)"
        case .environment(let name): return "\(environment) \(name)"
        case .flag(let name): return "flag \(name)"
        }
    }
}
