import ArgumentParser
import StaffcastCore

struct ConfigCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "config",
        abstract: "Show the effective configuration, or print the configuration reference.",
        discussion: """
            Examples:
              # every key, its value and its source
              staffcast config show --config /etc/staffcast.yaml
              STAFFCAST_DATABASE_WORKERS=8 staffcast config show --listen 127.0.0.1:9000
              staffcast config reference > docs/configuration.md
            """,
        subcommands: [ConfigShowCommand.self, ConfigReferenceCommand.self],
        defaultSubcommand: ConfigShowCommand.self)
}

struct ConfigShowCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "Print every configuration key's effective value and where it came from (secrets masked).",
        discussion: """
            Reads what `staffcast serve` would read, with the same precedence (flag >
            environment STAFFCAST_… > config file > default), and serves nothing. Each line
            says the key, its value and its source: default, file PATH, env STAFFCAST_X or
            flag --x. A bad value is one line naming the key and its source (exit 64).
            `serve --check-config` also checks the TLS files. It takes every setting flag
            of `staffcast serve` (listed by `staffcast serve --help`).

            Example:
              staffcast config show --config /etc/staffcast.yaml --database-workers 8
            """)

    @OptionGroup var options: ConfigurationOptions

    func run() throws {
        try reportingFailures {
            let (settings, file) = try options.settings()
            print(ConfigurationOptions.printout(settings, ConfigurationOptions.serverConfiguration(settings), file: file))
        }
    }
}

struct ConfigReferenceCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reference",
        abstract: "Print the configuration reference (Markdown: docs/configuration.md) from the declarations.",
        discussion: "Example: staffcast config reference > docs/configuration.md")

    func run() {
        print(ConfigReference.markdown(), terminator: "")
    }
}
