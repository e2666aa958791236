/// The configuration reference (docs/configuration.md) and the settings part of `serve --help`,
/// written from the declarations so they cannot drift from what is read.
public enum ConfigReference {
    /// What the kind accepts, in words: `1–64`, `true or false`, `text or json`.
    public static func accepts(_ key: ConfigKey) -> String {
        switch key.kind {
        case .integer(let r): return "whole number \(r.lowerBound)–\(r.upperBound)"
        case .number(let r): return "number \(ConfigValue.number(r.lowerBound).display)–\(ConfigValue.number(r.upperBound).display)"
        case .flag: return "true or false"
        case .choice(let c): return c.joined(separator: ", ")
        case .text(.hostPort): return "HOST:PORT"
        case .text(.minimumLength(let n, _)): return "text, at least \(n) characters"
        case .text(.url(let schemes, _)): return schemes.map { $0 + ":" }.joined(separator: " or ") + " URL"
        case .text(.bareAddress): return "email address"
        case .text(.anything): return "text"
        }
    }

    /// The default as the reference writes it.
    public static func defaultText(_ key: ConfigKey) -> String {
        if let v = key.defaultValue { return "`\(v.display)`" }
        return "unset: \(key.unsetMeaning ?? "none")"
    }

    /// docs/configuration.md, whole.
    public static func markdown(keys: [ConfigKey] = ConfigKey.all) -> String {
        var out = """
            # Configuration reference

            <!-- Generated from Sources/StaffcastCore/Configuration/ConfigKey+All.swift by
                 `staffcast config reference > docs/configuration.md`; a test fails when they differ. -->

            Every key can be set four ways. Precedence: **flag > environment > file > default**.

            - in the YAML config file (`staffcast serve --config FILE`, or `STAFFCAST_CONFIG=FILE`), as `key: value`;
            - in the environment, as `STAFFCAST_` and the key in capitals (an empty value counts as unset);
            - as a flag of `staffcast serve` (and `staffcast config show`): `--` and the key with dashes.

            `staffcast config show` prints every key's effective value and where it came from
            (`default`, `file PATH`, `env STAFFCAST_X`, `flag --x`), secrets masked;
            `staffcast serve --check-config` does the same and also checks the TLS files. A bad value
            stops both with one line that names the key and its source (exit status 64).
            config/staffcast.example.yaml is a commented example file with every key.

            | key | environment | flag | accepts | default | |
            |---|---|---|---|---|---|

            """
        for key in keys {
            let secret = key.secrecy == .shown ? "" : (key.secrecy == .secret ? " *Secret: masked.*" : " *Its password is masked.*")
            out += "| `\(key.name)` | \(alsoFormer(key.environmentName, key.formerEnvironmentNames)) | \(alsoFormer(key.flagName, key.formerFlags)) | \(accepts(key)) | \(defaultText(key)) | \(key.summary)\(secret) |\n"
        }
        return out
    }

    private static func alsoFormer(_ name: String, _ former: [String]) -> String {
        former.isEmpty ? "`\(name)`" : "`\(name)` (or \(former.map { "`\($0)`" }.joined(separator: ", ")))"
    }

    /// The settings section of `serve --help`: each flag with its variable and default, then its summary.
    public static func flagHelp(keys: [ConfigKey] = ConfigKey.all) -> String {
        keys.map { key in
            let source = "(\(key.environmentName); \(key.defaultValue.map { "default \($0.display)" } ?? "unset: \(key.unsetMeaning ?? "none")"))"
            let flag = "  \(key.flagName) <\(key.valueName)>"
            // The variable and default share the flag's line when they fit, else start the next.
            let head = flag.count + 2 + source.count <= HelpText.width
                ? flag + "  " + source : flag + "\n" + HelpText.wrap(source, indent: 6)
            return head + "\n" + HelpText.wrap(key.summary, indent: 6)
        }.joined(separator: "\n")
    }

    /// The `--help` line of a flag declared as an option of its own (`--listen`, `--tls-cert`…).
    public static func optionHelp(_ key: ConfigKey) -> String {
        "\(key.summary) (env \(key.environmentName); \(key.defaultValue.map { "default \($0.display)" } ?? "unset: \(key.unsetMeaning ?? "none")"))"
    }
}
