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
        var object: [String: String] = [
            "ts": Self.timestamp.format(Date()), "level": "\(event.level)",
            "logger": label, "msg": "\(event.message)",
        ]
        for (k, v) in metadata.merging(event.metadata ?? [:], uniquingKeysWith: { $1 }) { object[k] = "\(v)" }
        if let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) {
            FileHandle.standardError.write(data + Data([0x0A]))
        }
    }
}
