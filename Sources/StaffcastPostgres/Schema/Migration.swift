import Foundation

/// One numbered file of `sql/`, e.g. `001_schema.sql` → version 1, name "schema".
public struct Migration: Sendable, Equatable {
    public var version: Int
    public var name: String
    public var sql: String

    /// Reads every `NNN_name.sql` of `directory`, in version order.
    public static func load(from directory: URL) throws(PostgresError) -> [Migration] {
        let files: [String]
        do {
            files = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        } catch {
            throw PostgresError(.migration, "cannot read the migrations folder \(directory.path): \(error.localizedDescription)")
        }
        var texts: [(String, String)] = []
        for file in files where file.hasSuffix(".sql") {
            guard let sql = try? String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8) else {
                throw PostgresError(.migration, "cannot read migration file \(file)")
            }
            texts.append((file, sql))
        }
        return try parse(texts, from: directory.path)
    }

    /// The migrations compiled into the binary (`EmbeddedMigrations`), in version order.
    public static func embedded() throws(PostgresError) -> [Migration] {
        try parse(EmbeddedMigrations.files.map { ($0.name, String(decoding: $0.bytes, as: UTF8.self)) }, from: "the binary")
    }

    /// `NNN_name.sql` files (name, text) as migrations in version order; `source` names where
    /// they came from in errors.
    static func parse(_ files: [(String, String)], from source: String) throws(PostgresError) -> [Migration] {
        var out: [Migration] = []
        for (file, sql) in files.sorted(by: { $0.0 < $1.0 }) where file.hasSuffix(".sql") {
            let stem = file.dropLast(4)
            guard let underscore = stem.firstIndex(of: "_"), let version = Int(stem[..<underscore]) else {
                throw PostgresError(.migration, "migration file \(file) is not named NNN_name.sql")
            }
            if out.contains(where: { $0.version == version }) {
                throw PostgresError(.migration, "two migration files have version \(version)")
            }
            out.append(Migration(version: version, name: String(stem[stem.index(after: underscore)...]), sql: sql))
        }
        guard !out.isEmpty else { throw PostgresError(.migration, "no migrations found in \(source)") }
        return out
    }

    /// What the binary migrates with: the folder `$STAFFCAST_SQL_DIR` names (development: try
    /// a migration without rebuilding), else the migrations compiled in.
    public static func forThisBinary() throws(PostgresError) -> [Migration] {
        if let env = ProcessInfo.processInfo.environment["STAFFCAST_SQL_DIR"], !env.isEmpty {
            return try load(from: URL(fileURLWithPath: env))
        }
        return try embedded()
    }
}
