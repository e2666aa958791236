import Foundation

/// Remembers, per event, the last message seq a subscriber has shown, so a client that was
/// closed and started again catches up with `since_seq` (under `$XDG_STATE_HOME/staffcast`,
/// default `~/.local/state/staffcast`).
public struct CursorStore: Sendable {
    public let directory: URL

    public init(directory: URL? = nil) {
        if let directory {
            self.directory = directory
        } else {
            let env = ProcessInfo.processInfo.environment
            let base = env["XDG_STATE_HOME"].flatMap { $0.isEmpty ? nil : $0 }
                ?? ((env["HOME"] ?? NSHomeDirectory()) + "/.local/state")
            self.directory = URL(fileURLWithPath: base).appendingPathComponent("staffcast/cursors")
        }
    }

    private func file(_ key: String) -> URL { directory.appendingPathComponent(key) }

    public func load(_ key: String) -> Int64? {
        guard let text = try? String(contentsOf: file(key), encoding: .utf8) else { return nil }
        return Int64(text.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// Writes atomically (temp file + rename) so a crash never leaves half a number.
    public func save(_ key: String, _ seq: Int64) {
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try? Data("\(seq)\n".utf8).write(to: file(key), options: .atomic)
    }
}
