import CLibPQ
import Foundation

/// The one owner of a `PGresult`; clears it when released. Values are read in text format.
public final class PGResult {
    private let handle: OpaquePointer

    init(_ handle: OpaquePointer) { self.handle = handle }
    deinit { PQclear(handle) }

    public var rowCount: Int { Int(PQntuples(handle)) }
    public var columnCount: Int { Int(PQnfields(handle)) }
    /// Rows touched by INSERT/UPDATE/DELETE.
    public var affectedRows: Int {
        guard let text = PQcmdTuples(handle) else { return 0 }
        return Int(String(cString: text)) ?? 0
    }

    public func isNull(_ row: Int, _ column: Int) -> Bool {
        PQgetisnull(handle, Int32(row), Int32(column)) != 0
    }

    public func string(_ row: Int, _ column: Int) -> String? {
        guard row < rowCount, column < columnCount, !isNull(row, column),
              let value = PQgetvalue(handle, Int32(row), Int32(column)) else { return nil }
        return String(cString: value)
    }

    public func int64(_ row: Int, _ column: Int) -> Int64? { string(row, column).flatMap { Int64($0) } }
    public func int(_ row: Int, _ column: Int) -> Int? { string(row, column).flatMap { Int($0) } }
    public func bool(_ row: Int, _ column: Int) -> Bool? { string(row, column).map { $0 == "t" } }
    public func uuid(_ row: Int, _ column: Int) -> UUID? { string(row, column).flatMap { UUID(wireText: $0) } }

    /// A timestamp selected as microseconds since 1970 (`Store.epochMicros`).
    public func date(_ row: Int, _ column: Int) -> Date? {
        int64(row, column).map { Date(timeIntervalSince1970: Double($0) / 1_000_000) }
    }
}
