/// Decides every key's effective value: flag > environment > file > default. Every value a
/// source gives is checked (an overridden bad value in the file is still an error), and an error
/// names the key and the source to fix. Pure: no I/O.
public enum ConfigResolver {
    public static func resolve(_ layers: ConfigLayers, keys: [ConfigKey] = ConfigKey.all) throws(ConfigError) -> EffectiveConfiguration {
        if let path = layers.filePath {
            for name in layers.file.keys.sorted() where !keys.contains(where: { $0.name == name }) {
                throw .unknownKey(name, path: path)
            }
        }
        var entries: [EffectiveConfiguration.Entry] = []
        for key in keys {
            // Lowest first, so the last one checked wins.
            var candidates: [(ConfigSource, ConfigInput)] = []
            if let path = layers.filePath, let input = layers.file[key.name], input != .null {
                candidates.append((.file(path: path), input))
            }
            for name in ([key.environmentName] + key.formerEnvironmentNames).reversed() {
                if let text = layers.environment[name], !text.isEmpty {
                    candidates.append((.environment(name: name), .text(text)))
                }
            }
            // `--tls-cert ""` unsets what the file or environment set (for keys without a default).
            var unsetBy: ConfigSource?
            if let given = layers.flags[key.name] {
                if given.value.isEmpty && key.defaultValue == nil {
                    unsetBy = .flag(name: given.flag)
                } else {
                    candidates.append((.flag(name: given.flag), .text(given.value)))
                }
            }
            var entry = EffectiveConfiguration.Entry(key: key, value: key.defaultValue, source: .defaultValue)
            for (source, input) in candidates {
                switch key.check(input) {
                case .success(let value): entry = .init(key: key, value: value, source: source)
                case .failure(let invalid): throw .invalid(key: key.name, source: source, reason: invalid.reason)
                }
            }
            if let unsetBy { entry = .init(key: key, value: nil, source: unsetBy) }
            entries.append(entry)
        }
        return EffectiveConfiguration(entries: entries)
    }
}
