/// Where a configuration value came from. Precedence: flag > environment > file > default.
public enum ConfigSource: Sendable, Hashable, CustomStringConvertible {
    case defaultValue
    case file(path: String)
    case environment(name: String)
    case flag(name: String)

    /// `default`, `file PATH`, `env STAFFCAST_X` or `flag --x`: the printout's last column.
    public var description: String {
        switch self {
        case .defaultValue: return "default"
        case .file(let path): return "file \(path)"
        case .environment(let name): return "env \(name)"
        case .flag(let name): return "flag \(name)"
        }
    }

    /// How an error names the place to fix: `config file PATH`, `environment variable X`, `flag --x`.
    public var errorPrefix: String {
        switch self {
        case .defaultValue: return "default"
        case .file(let path): return "config file \(path)"
        case .environment(let name): return "environment variable \(name)"
        case .flag(let name): return "flag \(name)"
        }
    }
}
