import ArgumentParser
import StaffcastCore
import Foundation
import StaffcastPostgres

struct ClusterCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cluster",
        abstract: "Start, stop or show the embedded PostgreSQL cluster under a data dir.",
        discussion: """
            `serve` and `admin` start the cluster themselves; this is for ops and scripts.
            Examples:
              staffcast cluster status --data-dir /var/lib/staffcast
              staffcast cluster stop
            """)

    enum Action: String, ExpressibleByArgument, CaseIterable { case start, stop, status, url }

    @Argument(help: "start, stop, status or url.") var action: Action
    @Option(help: ArgumentHelp("The data dir (env STAFFCAST_DATA_DIR; default ./.staffcast).", valueName: "dir")) var dataDir: String?

    func run() throws {
        try reportingFailures {
            let dir = dataDir ?? environment(ConfigKey.dataDir.environmentName) ?? ConfigKey.dataDir.defaultText
            let cluster = try EmbeddedCluster(dataDir: dir)
            switch action {
            case .start:
                // Detached: it belongs to no process, so it is never taken for an orphan.
                _ = try cluster.ensureRunning(detached: true)
                print("running: \(cluster.clusterDir.path)")
            case .stop:
                try cluster.stop()
                print("stopped: \(cluster.clusterDir.path)")
            case .status:
                print(cluster.isRunning ? "running: \(cluster.clusterDir.path)" : "not running: \(cluster.clusterDir.path)")
                if !cluster.isRunning { throw ExitCode(3) }
            case .url:
                print(cluster.url)
            }
        }
    }
}
