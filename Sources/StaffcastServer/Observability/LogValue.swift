import Foundation
import Logging

/// Log metadata written the way the API writes things, so `grep $ID` finds a log line and a
/// JSON log keeps its types: ids in lower case, numbers as numbers (the JSON log handler
/// writes `.stringConvertible` integers and doubles as JSON numbers).
enum LogValue {
    static func id(_ id: UUID) -> Logger.MetadataValue { .string(id.wireText) }
    static func id(_ id: UUID?) -> Logger.MetadataValue { id.map(Self.id) ?? .string("-") }
    static func number(_ n: Int) -> Logger.MetadataValue { .stringConvertible(n) }
    static func number(_ n: Int64) -> Logger.MetadataValue { .stringConvertible(n) }
    static func number(_ n: Double) -> Logger.MetadataValue { .stringConvertible(n) }
}
