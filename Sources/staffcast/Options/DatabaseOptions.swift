import ArgumentParser
import Foundation
import Logging
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

    @Option(name: .long, help: ArgumentHelp("Log level: trace, debug, info, notice, warning, error, critical (env STAFFCAST_LOG_LEVEL).",
                                            valueName: "level"))
    var logLevel: String?

    @Flag(name: .long, help: "Log one JSON object per line.")
    var logJSON = false

    @Flag(name: .long, help: "admin commands: create the embedded cluster when the data dir has none (serve and migrate always do).")
    var create = false

    /// The config file named by --config or $STAFFCAST_CONFIG (nil when neither).
    func loadConfigFile() throws -> ConfigFile? {
        guard let path = config ?? environment("STAFFCAST_CONFIG") else { return nil }
        return try ConfigFile.load(path: path)
    }

    /// Flag, else environment, else config file.
    func resolved(_ file: ConfigFile?) -> (databaseURL: String?, dataDir: String) {
        let url = databaseURL ?? environment("STAFFCAST_DATABASE_URL") ?? file?.databaseURL
        let dir = dataDir ?? environment("STAFFCAST_DATA_DIR") ?? file?.dataDir ?? "./.staffcast"
        return (url, dir)
    }

    /// The owner's URL for migrations and admin commands, when one is set apart.
    func resolvedMigrateURL(_ file: ConfigFile?) -> String? {
        migrateDatabaseURL ?? environment("STAFFCAST_MIGRATE_DATABASE_URL") ?? file?.migrateDatabaseURL
    }

    func level(_ file: ConfigFile?) throws -> Logger.Level {
        let text = logLevel ?? environment("STAFFCAST_LOG_LEVEL") ?? file?.logLevel ?? "info"
        guard let level = Logger.Level(rawValue: text.lowercased()) else {
            throw CommandFailure("log level '\(text)' is not one of trace, debug, info, notice, warning, error, critical")
        }
        return level
    }

    /// Sets up logging, finds the database (starting the embedded cluster when needed) and
    /// brings its schema up to date. Returns the target and a logger.
    /// `create: false` (admin commands without --create) refuses a data dir that has no cluster.
    func open(applicationName: String, file: ConfigFile?, create: Bool = true) throws -> (DatabaseTarget, Logger) {
        LogSetup.bootstrap(level: try level(file), json: logJSON || file?.logFormat == "json")
        let logger = Logger(label: "staffcast")
        setenv("PGAPPNAME", applicationName, 1) // lets a server see which other servers share the cluster
        let where_ = resolved(file)
        let target = try DatabaseTarget(databaseURL: where_.databaseURL, migrateDatabaseURL: resolvedMigrateURL(file),
                                        dataDir: where_.dataDir, create: create || self.create)
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
