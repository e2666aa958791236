/// One configuration value once it is checked against its key's kind.
public enum ConfigValue: Sendable, Hashable {
    case text(String)
    case integer(Int)
    case number(Double)
    case flag(Bool)

    /// How the value is written in the printout and the docs (`20`, `2.5`, `true`, text as is).
    public var display: String {
        switch self {
        case .text(let s): return s
        case .integer(let i): return String(i)
        case .number(let d): return d == d.rounded() && abs(d) < 1e15 ? String(Int(d)) : String(d)
        case .flag(let b): return b ? "true" : "false"
        }
    }

    public var text: String? { if case .text(let s) = self { return s } else { return nil } }
    public var integer: Int? { if case .integer(let i) = self { return i } else { return nil } }
    public var number: Double? { if case .number(let d) = self { return d } else { return nil } }
    public var flag: Bool? { if case .flag(let b) = self { return b } else { return nil } }
}

/// A value as a source gave it, before it is checked: a YAML scalar of the config file, or the
/// text of an environment variable or a flag.
public enum ConfigInput: Sendable, Hashable {
    case text(String)
    case integer(Int)
    case number(Double)
    case flag(Bool)
    /// `key:` with nothing after it (or `~`): the same as leaving the key out.
    case null
}

extension ConfigInput {
    /// The text of a text input.
    var textValue: String? { if case .text(let s) = self { return s } else { return nil } }
}
