import Foundation
import Logging

/// swift-log set-up shared by every command: human lines on stderr, or JSON lines.
enum LogSetup {
    nonisolated(unsafe) private static var done = false

    static func bootstrap(level: Logger.Level, json: Bool) {
        guard !done else { return }
        done = true
        LoggingSystem.bootstrap { label in
            if json {
                var handler = JSONLogHandler(label: label)
                handler.logLevel = level
                return handler
            }
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
    }
}

/// One JSON object per log line on stderr, for log collectors.
struct JSONLogHandler: LogHandler {
    private static let timestamp = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
    let label: String
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var object: [String: Any] = [:]
        for (k, v) in metadata.merging(event.metadata ?? [:], uniquingKeysWith: { $1 }) { object[k] = Self.json(v) }
        // The line's own keys win over metadata of the same name.
        object["ts"] = Self.timestamp.format(Date())
        object["level"] = "\(event.level)"
        object["logger"] = label
        object["msg"] = "\(event.message)"
        if let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) {
            FileHandle.standardError.write(data + Data([0x0A]))
        }
    }

    /// A metadata value as JSON: numbers and booleans given as such (`.stringConvertible`)
    /// stay numbers and booleans; everything else is text.
    static func json(_ value: Logger.MetadataValue) -> Any {
        switch value {
        case .string(let s): return s
        case .stringConvertible(let v):
            switch v {
            case let n as Int: return n
            case let n as Int64: return n
            case let n as Int32: return n
            case let n as UInt64: return n
            case let d as Double where d.isFinite: return d
            case let b as Bool: return b
            default: return v.description
            }
        case .array(let list): return list.map(json)
        case .dictionary(let map): return map.mapValues(json)
        }
    }
}
