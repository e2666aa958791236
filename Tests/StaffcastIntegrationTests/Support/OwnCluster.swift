import Foundation
import StaffcastPostgres

/// A migrated PostgreSQL cluster of one test's own under /tmp, for a test that stops its
/// database (the shared one must stay up for the others). `remove()` stops it and deletes it.
struct OwnCluster {
    let cluster: EmbeddedCluster
    let dir: String
    var conninfo: String { cluster.conninfo }

    init(_ name: String) throws {
        dir = "/tmp/\(name)-\(UUID().uuidString.prefix(8))"
        cluster = try EmbeddedCluster(dataDir: dir)
        do {
            try cluster.ensureRunning(detached: true)
            try Migrator(migrations: try TestDatabase.migrations(), logger: TestDatabase.logger).migrate(PGConnection(conninfo: cluster.conninfo))
        } catch {
            remove()
            throw error
        }
    }

    func remove() {
        try? cluster.stop()
        try? FileManager.default.removeItem(atPath: dir)
    }
}
