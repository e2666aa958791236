import Foundation
import StaffcastCore
import Yams

/// The YAML config file (`--config FILE` or `STAFFCAST_CONFIG`): read into raw values by key.
/// Which keys exist, their checks and their precedence are `ConfigKey`'s and `ConfigResolver`'s
/// (StaffcastCore); this only reads the file. config/staffcast.example.yaml lists every key.
struct ConfigFile {
    let path: String
    let values: [String: ConfigInput]

    static func load(path: String) throws -> ConfigFile {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw CommandFailure("cannot read config file \(path)", status: .usage)
        }
        return try parse(text, path: path)
    }

    static func parse(_ text: String, path: String) throws -> ConfigFile {
        let loaded: Any?
        do {
            loaded = try Yams.load(yaml: text)
        } catch {
            throw CommandFailure("config file \(path) is not valid YAML: \(oneLine(error))", status: .usage)
        }
        guard let root = loaded else { return ConfigFile(path: path, values: [:]) }
        guard let map = root as? [String: Any] else { throw ConfigError.notAMapping(path: path) }
        try refuseSurprises(text, path: path)
        var values: [String: ConfigInput] = [:]
        for (key, value) in map {
            switch value {
            case is NSNull: values[key] = .null
            case let b as Bool: values[key] = .flag(b)
            case let i as Int: values[key] = .integer(i)
            case let d as Double: values[key] = .number(d)
            case let s as String: values[key] = .text(s)
            default:
                // A list or a mapping: no key takes one. Unknown keys are named first.
                guard ConfigKey.named(key) != nil else { throw ConfigError.unknownKey(key, path: path) }
                throw ConfigError.invalid(key: key, source: .file(path: path), reason: "must be a single value, not a list or mapping")
            }
        }
        return ConfigFile(path: path, values: values)
    }

    /// What YAML accepts but a person did not mean: a key given twice (the last one won,
    /// silently), and a number with a leading zero (`010` is octal 8 in YAML 1.1).
    private static func refuseSurprises(_ text: String, path: String) throws {
        guard case .mapping(let mapping)? = try? Yams.compose(yaml: text) else { return }
        var seen: Set<String> = []
        for (key, value) in mapping {
            guard let name = key.string else { continue }
            guard seen.insert(name).inserted else {
                throw ConfigError.invalid(key: name, source: .file(path: path), reason: "is set twice in the file; keep one")
            }
            // Only where a number is wanted; an unknown key is named as one later.
            guard let declared = ConfigKey.named(name) else { continue }
            let numeric: Bool = switch declared.kind { case .integer, .number: true; default: false }
            if numeric, case .scalar(let scalar) = value, scalar.style == .plain,
               scalar.string.range(of: #"^[+-]?0[0-9_]+$"#, options: .regularExpression) != nil {
                throw ConfigError.invalid(key: name, source: .file(path: path),
                                          reason: "\(scalar.string) has a leading zero, which YAML reads as an octal number; write it without the zero")
            }
        }
    }
}
