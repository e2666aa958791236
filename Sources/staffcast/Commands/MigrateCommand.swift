import ArgumentParser
import StaffcastPostgres

struct MigrateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Apply the sql/ migrations to the database (serve and admin do this too).",
        discussion: """
            Each migration runs in its own transaction under an advisory lock and is
            recorded in schema_migrations, so running it again, or from two machines at
            once, is safe.

            Examples:
              staffcast migrate
              staffcast migrate --database-url postgresql://staffcast@db.internal/staffcast
            """)

    @OptionGroup var database: DatabaseOptions

    func run() throws {
        try reportingFailures {
            let file = try database.loadConfigFile()
            let (target, logger) = try database.open(applicationName: "staffcast migrate", file: file)
            defer { target.release(onlyIfStartedHere: true, logger: logger) }
            let conn = try PGConnection(conninfo: target.conninfo)
            let version = try conn.query("SELECT max(version) FROM schema_migrations").int(0, 0) ?? 0
            print("schema is at version \(version) (\(target.displayName))")
        }
    }
}
