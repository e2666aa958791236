import Foundation

/// One configuration key, declared once (`ConfigKey+All.swift`). Everything else comes from it:
/// the YAML key (`name`), the environment variable (`STAFFCAST_` + NAME), the `serve` flag
/// (`--name-with-dashes`), the default, the check of a value, whether it is masked, and the line
/// of the configuration reference (docs/configuration.md).
public struct ConfigKey: Sendable, Hashable {
    /// What values a key takes, and the range it is checked against.
    public enum Kind: Sendable, Hashable {
        case text(TextRule)
        case integer(ClosedRange<Int>)
        case number(ClosedRange<Double>)
        case flag
        case choice([String])
    }

    /// Extra checks of a text value.
    public enum TextRule: Sendable, Hashable {
        case anything
        /// `HOST:PORT` (an IPv6 host in brackets), port 0–65535.
        case hostPort
        /// At least this many characters besides spaces; `why` is said when it is shorter.
        case minimumLength(Int, why: String)
        /// A URL with one of these schemes and a host; `example` is shown when it is not.
        case url(schemes: [String], example: String)
        /// A bare email address (no name, no angle brackets).
        case bareAddress
    }

    /// How the printout shows a value.
    public enum Secrecy: Sendable, Hashable {
        case shown
        /// The whole value is a secret: shown as `***`.
        case secret
        /// A URL whose password (if any) is hidden.
        case passwordInURL
    }

    /// The YAML key, snake_case.
    public let name: String
    public let kind: Kind
    /// The value when no source gives one; nil: the key is unset (`unsetMeaning` says what then).
    public let defaultValue: ConfigValue?
    /// What an unset key means, for keys without a fixed default ("host name and pid").
    public let unsetMeaning: String?
    public let secrecy: Secrecy
    /// One line for the reference, the example file and `serve --help`.
    public let summary: String
    /// The placeholder of the flag's value in `--help` (`n`, `seconds`, `url`…).
    public let valueName: String
    /// Older environment names still read (after the regular one).
    public let formerEnvironmentNames: [String]
    /// Older flag spellings still accepted.
    public let formerFlags: [String]
    /// Values people may try that are refused on purpose, with the reason said after the error.
    public let refusedValues: [String: String]

    public init(_ name: String, _ kind: Kind, default defaultValue: ConfigValue? = nil, unset: String? = nil,
                secrecy: Secrecy = .shown, value valueName: String, formerEnvironmentNames: [String] = [],
                formerFlags: [String] = [], refused: [String: String] = [:], _ summary: String) {
        self.name = name
        self.kind = kind
        self.defaultValue = defaultValue
        self.unsetMeaning = unset
        self.secrecy = secrecy
        self.summary = summary
        self.valueName = valueName
        self.formerEnvironmentNames = formerEnvironmentNames
        self.formerFlags = formerFlags
        self.refusedValues = refused
    }

    /// `STAFFCAST_` and the name in capitals: every key has one.
    public var environmentName: String { "STAFFCAST_" + name.uppercased() }
    /// `--` and the name with dashes: every key has one.
    public var flagName: String { "--" + name.replacingOccurrences(of: "_", with: "-") }

    public var defaultInteger: Int { defaultValue?.integer ?? 0 }
    public var defaultNumber: Double { defaultValue?.number ?? 0 }
    public var defaultText: String { defaultValue?.text ?? "" }
    public var defaultFlag: Bool { defaultValue?.flag ?? false }

    /// `input` checked against the kind; the reason is "must be …" when it does not fit.
    public func check(_ input: ConfigInput) -> Result<ConfigValue, Invalid> {
        switch (kind, input) {
        case (_, .null): return .failure(Invalid(reason: "has no value"))
        case (.integer(let range), _):
            let n: Int?
            switch input {
            case .integer(let i): n = i
            case .text(let s): n = Int(s.trimmingCharacters(in: .whitespaces))
            default: n = nil
            }
            guard let n, range.contains(n) else {
                return .failure(Invalid(reason: "must be a whole number from \(range.lowerBound) to \(range.upperBound)"))
            }
            return .success(.integer(n))
        case (.number(let range), _):
            let d: Double?
            switch input {
            case .integer(let i): d = Double(i)
            case .number(let x): d = x
            case .text(let s): d = Double(s.trimmingCharacters(in: .whitespaces))
            default: d = nil
            }
            guard let d, d.isFinite, range.contains(d) else {
                return .failure(Invalid(reason: "must be a number from \(ConfigValue.number(range.lowerBound).display) to \(ConfigValue.number(range.upperBound).display)"))
            }
            return .success(.number(d))
        case (.flag, _):
            switch input {
            case .flag(let b): return .success(.flag(b))
            case .text(let s):
                switch s.lowercased() {
                case "true", "yes", "on", "1": return .success(.flag(true))
                case "false", "no", "off", "0": return .success(.flag(false))
                default: break
                }
            default: break
            }
            return .failure(Invalid(reason: "must be true or false"))
        case (.choice(let choices), _):
            guard case .text(let s) = input, choices.contains(s.lowercased()) else {
                let options = choices.count == 2 ? "\(choices[0]) or \(choices[1])" : "one of \(choices.joined(separator: ", "))"
                let why = input.textValue.flatMap { refusedValues[$0.lowercased()] }.map { "; " + $0 } ?? ""
                return .failure(Invalid(reason: "must be \(options)\(why)"))
            }
            return .success(.text(s.lowercased()))
        case (.text(let rule), _):
            let s: String
            switch input {
            case .text(let t): s = t
            case .integer(let i): s = String(i)
            default: return .failure(Invalid(reason: "must be text"))
            }
            if let reason = rule.problem(with: s) { return .failure(Invalid(reason: reason)) }
            return .success(.text(s))
        }
    }

    /// Why a value does not fit (`must be …`).
    public struct Invalid: Error, Sendable, Equatable {
        public let reason: String
    }

    /// `value` as the printout shows it: secrets masked.
    public func shown(_ value: ConfigValue) -> String {
        switch secrecy {
        case .shown: return value.display
        case .secret: return SecretMask.placeholder
        case .passwordInURL: return SecretMask.hidingPassword(in: value.display)
        }
    }
}

extension ConfigKey.TextRule {
    /// Nil when `text` fits, else the reason ("must be …").
    func problem(with text: String) -> String? {
        switch self {
        case .anything:
            return nil
        case .hostPort:
            guard let (_, port) = ConfigKey.splitHostPort(text), (0...65_535).contains(port) else {
                return "must be HOST:PORT such as 0.0.0.0:8080 (not '\(text)')"
            }
            return nil
        case .minimumLength(let n, let why):
            return text.trimmingCharacters(in: .whitespaces).count >= n ? nil : "must be at least \(n) characters (\(why))"
        case .url(let schemes, let example):
            guard let u = URLComponents(string: text), schemes.contains(u.scheme?.lowercased() ?? ""),
                  u.host?.isEmpty == false || u.scheme?.lowercased() == "mailto" else {
                return "must be a \(schemes.map { $0 + ":" }.joined(separator: " or ")) URL such as \(example)"
            }
            return nil
        case .bareAddress:
            guard text.contains("@"), !text.contains(where: { $0 == "<" || $0 == ">" || $0.isWhitespace }) else {
                return "must be a bare address such as staffcast@example.org"
            }
            return nil
        }
    }
}

extension ConfigKey {
    /// `HOST:PORT` split at its last colon (brackets of an IPv6 host removed); nil when not so.
    public static func splitHostPort(_ text: String) -> (host: String, port: Int)? {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]) else { return nil }
        return (String(text[..<colon]).trimmingCharacters(in: CharacterSet(charactersIn: "[]")), port)
    }
}
