import ArgumentParser
import Foundation
import Logging
import StaffcastCore
import StaffcastPostgres

/// How `serve`, `migrate` and `admin` find the database; the same flags, environment and
/// config file for all of them, so they always meet the same one.
struct DatabaseOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("Config file (YAML); see config/staffcast.example.yaml.", valueName: "file"))
    var config: String?

    @Option(name: .long, help: ArgumentHelp(
        "PostgreSQL URL of an existing database (env STAFFCAST_DATABASE_URL). Without one, staffcast runs its own cluster under the data dir.",
        valueName: "url"))
    var databaseURL: String?

    @Option(name: .long, help: ArgumentHelp(
        "PostgreSQL URL of the tables' owner, for migrations and admin commands (env STAFFCAST_MIGRATE_DATABASE_URL; default: the database URL). The server itself connects with --database-url, which should be a login that owns nothing (docs/operations.md).",
        valueName: "url"))
    var migrateDatabaseURL: String?

    @Option(name: .long, help: ArgumentHelp("Where the embedded cluster lives (env STAFFCAST_DATA_DIR; default ./.staffcast).",
                                            valueName: "dir"))
    var dataDir: String?

    @Option(name: .long, help: ArgumentHelp("Log level: trace, debug, info, notice, warning, error, critical (env STAFFCAST_LOG_LEVEL; default info).",
                                            valueName: "level"))
    var logLevel: String?

    @Flag(name: .long, help: "Log one JSON object per line (log_format json; env STAFFCAST_LOG_FORMAT).")
    var logJSON = false

    @Flag(name: .long, help: "admin commands: create the embedded cluster when the data dir has none (serve and migrate always do).")
    var create = false

    /// The config file named by --config or $STAFFCAST_CONFIG (nil when neither).
    func loadConfigFile() throws -> ConfigFile? {
        guard let path = config ?? environment("STAFFCAST_CONFIG") else { return nil }
        return try ConfigFile.load(path: path)
    }

    /// The sources of the settings these flags take part in: the environment, the file, and
    /// the database flags given here (the other settings' flags are `ConfigurationOptions`').
    func layers(_ file: ConfigFile?) -> ConfigLayers {
        var layers = ConfigLayers(environment: ProcessInfo.processInfo.environment, filePath: file?.path,
                                  file: file?.values ?? [:])
        if let databaseURL { layers.setFlag(.databaseURL, databaseURL) }
        if let migrateDatabaseURL { layers.setFlag(.migrateDatabaseURL, migrateDatabaseURL) }
        if let dataDir { layers.setFlag(.dataDir, dataDir) }
        if let logLevel { layers.setFlag(.logLevel, logLevel) }
        if logJSON { layers.setFlag(.logFormat, "json", spelled: "--log-json") }
        return layers
    }

    /// Every key's effective value: flag, else environment, else config file, else default.
    func settings(_ file: ConfigFile?) throws -> EffectiveConfiguration {
        try ConfigResolver.resolve(layers(file))
    }

    /// Sets up logging, finds the database (starting the embedded cluster when needed) and
    /// brings its schema up to date, with the settings of `file`, the environment and the flags.
    func open(applicationName: String, file: ConfigFile?, create: Bool = true) throws -> (DatabaseTarget, Logger) {
        try open(applicationName: applicationName, settings: settings(file), create: create)
    }

    /// Sets up logging, finds the database (starting the embedded cluster when needed) and
    /// brings its schema up to date. Returns the target and a logger.
    /// `create: false` (admin commands without --create) refuses a data dir that has no cluster.
    func open(applicationName: String, settings: EffectiveConfiguration, create: Bool = true) throws -> (DatabaseTarget, Logger) {
        let level = settings.text(.logLevel).flatMap(Logger.Level.init(rawValue:)) ?? .info
        LogSetup.bootstrap(level: level, json: settings.text(.logFormat) == "json")
        let logger = Logger(label: "staffcast")
        setenv("PGAPPNAME", applicationName, 1) // names each staffcast process's sessions in pg_stat_activity
        let target = try DatabaseTarget(databaseURL: settings.text(.databaseURL),
                                        migrateDatabaseURL: settings.text(.migrateDatabaseURL),
                                        dataDir: settings.text(.dataDir) ?? ConfigKey.dataDir.defaultText,
                                        create: create || self.create)
        if let pid = target.stoppedOrphan {
            logger.warning("the embedded PostgreSQL (pid \(pid)) was left running by a staffcast that ended without stopping it (killed?); stopped it and started it afresh",
                           metadata: ["at": "\(target.displayName)"])
        } else if target.startedCluster {
            logger.info("started the embedded PostgreSQL", metadata: ["at": "\(target.displayName)"])
        }
        do {
            let conn = try PGConnection(conninfo: target.conninfo)
            let migrator = try Self.migrator(logger: logger)
            // Up to date: nothing to do (a login that owns nothing may serve without migrating).
            do { try migrator.verify(conn) } catch { try migrator.migrate(conn) }
        } catch {
            target.release(onlyIfStartedHere: true, logger: logger)
            throw error
        }
        return (target, logger)
    }

    static func migrator(logger: Logger) throws -> Migrator {
        Migrator(migrations: try Migration.forThisBinary(), logger: logger)
    }
}
