import Foundation

/// One numbered file of `sql/`, e.g. `001_schema.sql` → version 1, name "schema".
public struct Migration: Sendable, Equatable {
    public var version: Int
    public var name: String
    public var sql: String

    public init(version: Int, name: String, sql: String) {
        self.version = version
        self.name = name
        self.sql = sql
    }

    /// Reads every `NNN_name.sql` of `directory`, in version order.
    public static func load(from directory: URL) throws(PostgresError) -> [Migration] {
        let files: [String]
        do {
            files = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        } catch {
            throw PostgresError(.migration, "cannot read the migrations folder \(directory.path): \(error.localizedDescription)")
        }
        var out: [Migration] = []
        for file in files.sorted() where file.hasSuffix(".sql") {
            let stem = file.dropLast(4)
            guard let underscore = stem.firstIndex(of: "_"), let version = Int(stem[..<underscore]) else {
                throw PostgresError(.migration, "migration file \(file) is not named NNN_name.sql")
            }
            guard let sql = try? String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8) else {
                throw PostgresError(.migration, "cannot read migration file \(file)")
            }
            if out.contains(where: { $0.version == version }) {
                throw PostgresError(.migration, "two migration files have version \(version)")
            }
            out.append(Migration(version: version, name: String(stem[stem.index(after: underscore)...]), sql: sql))
        }
        guard !out.isEmpty else { throw PostgresError(.migration, "no migrations found in \(directory.path)") }
        return out
    }

    /// Where `sql/` is: `$STAFFCAST_SQL_DIR`, else beside or above the running executable
    /// (a source checkout runs `.build/debug/staffcast`), else `share/staffcast/sql` of an
    /// install prefix, else `./sql`.
    public static func locateDirectory(executable: String = CommandLine.arguments.first ?? "") -> URL? {
        let fm = FileManager.default
        func valid(_ url: URL) -> Bool { fm.fileExists(atPath: url.appendingPathComponent("001_schema.sql").path) }
        if let env = ProcessInfo.processInfo.environment["STAFFCAST_SQL_DIR"], !env.isEmpty {
            return URL(fileURLWithPath: env)
        }
        var dir = URL(fileURLWithPath: executable).resolvingSymlinksInPath().deletingLastPathComponent()
        for _ in 0..<6 {
            if valid(dir.appendingPathComponent("sql")) { return dir.appendingPathComponent("sql") }
            if valid(dir.appendingPathComponent("share/staffcast/sql")) { return dir.appendingPathComponent("share/staffcast/sql") }
            dir = dir.deletingLastPathComponent()
        }
        let cwd = URL(fileURLWithPath: fm.currentDirectoryPath).appendingPathComponent("sql")
        return valid(cwd) ? cwd : nil
    }
}
