import ArgumentParser
import Foundation
import StaffcastCore
import StaffcastServer

/// The options of `serve` and `config show`: the database options, and a flag for every other
/// configuration key (`--key-with-dashes VALUE`, read by `ConfigLayers.readFlags` from the
/// declarations, so a new key needs no new option here; `serve --help` lists them).
struct ConfigurationOptions: ParsableArguments {
    @OptionGroup var database: DatabaseOptions

    // The settings the contract names, shown in the usage line (help from their declarations).
    @Option(help: ArgumentHelp(ConfigReference.optionHelp(.listen), valueName: ConfigKey.listen.valueName))
    var listen: String?
    @Option(help: ArgumentHelp(ConfigReference.optionHelp(.tlsCert), valueName: ConfigKey.tlsCert.valueName))
    var tlsCert: String?
    @Option(help: ArgumentHelp(ConfigReference.optionHelp(.tlsKey), valueName: ConfigKey.tlsKey.valueName))
    var tlsKey: String?

    /// Every argument the declared options did not take: the settings' flags.
    @Argument(parsing: .allUnrecognized, help: ArgumentHelp(visibility: .hidden))
    var settingFlags: [String] = []

    /// The config file, the environment and every flag, resolved (flag > env > file > default).
    func settings() throws -> (EffectiveConfiguration, ConfigFile?) {
        let file = try database.loadConfigFile()
        var layers = database.layers(file)
        try layers.readFlags(settingFlags)
        if let listen { layers.setFlag(.listen, listen) }
        if let tlsCert { layers.setFlag(.tlsCert, tlsCert) }
        if let tlsKey { layers.setFlag(.tlsKey, tlsKey) }
        return (try ConfigResolver.resolve(layers), file)
    }

    /// The server's configuration from `settings`, with what is worked out at start (the VAPID
    /// key beside the data when no file is named).
    static func serverConfiguration(_ settings: EffectiveConfiguration) -> ServerConfiguration {
        var configuration = ServerConfiguration(settings)
        if configuration.reach.pushVapidKey == nil {
            configuration.reach.pushVapidKey = URL(fileURLWithPath: settings.text(.dataDir) ?? ConfigKey.dataDir.defaultText)
                .appendingPathComponent("push_vapid_key.pem").path
        }
        return configuration
    }

    /// The printout of `serve --check-config` and `config show`: the file, then every key's value
    /// and source, secrets masked.
    static func printout(_ settings: EffectiveConfiguration, _ configuration: ServerConfiguration, file: ConfigFile?) -> String {
        let derived = [
            ConfigKey.nodeID.name: "\(configuration.nodeID) (host name and pid)",
            ConfigKey.pushVapidKey.name: "\(configuration.reach.pushVapidKey ?? "(none)") (in data_dir)",
        ]
        var notes: [String: String] = [:]
        if configuration.serviceThreads == 0 { notes[ConfigKey.serviceThreads.name] = "one per core: \(configuration.resolvedServiceThreads)" }
        if configuration.escalation.emergencyDefaultMinutes == nil {
            notes[ConfigKey.escalateAfterMinutes.name] = "emergencies do not escalate by default"
        }
        let lines = ["  config_file: \(file?.path ?? "(none)")"] + settings.printout(derived: derived, notes: notes)
        return lines.joined(separator: "\n")
    }
}
