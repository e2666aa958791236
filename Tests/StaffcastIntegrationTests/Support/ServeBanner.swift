import Foundation

/// The port `staffcast serve` listens on, read from the banner it prints on stdout ("serving on
/// HOST:PORT") — the one way a test learns the port of a server started with port 0.
enum ServeBanner {
    /// Reads `stdout` until the banner names a port (0 when the process closed it first or
    /// `seconds` passed), with everything read so far for the failure message.
    static func port(from stdout: FileHandle, seconds: TimeInterval) -> (port: Int, text: String) {
        var text = ""
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            let chunk = stdout.availableData
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
            if let r = text.range(of: #"serving on [^ ]+:(\d+)"#, options: .regularExpression) {
                return (Int(text[r].split(separator: ":").last ?? "") ?? 0, text)
            }
        }
        return (0, text)
    }
}
