import Foundation

/// `--json` output: one JSON document per command (an array for lists), sorted keys, on
/// stdout. (Streams such as `watch --json` and `receipts --watch --json` print one object a
/// line instead: they never end.)
enum JSONOutput {
    static func print<T: Encodable>(_ value: T) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        Swift.print(String(decoding: try encoder.encode(value), as: UTF8.self))
    }
}
