import Foundation

/// Runs a helper program (initdb, pg_ctl, runuser) to completion and captures its output.
///
/// Output goes to a temporary file, not a pipe: `pg_ctl start` leaves a daemon behind that
/// inherits the child's descriptors, and a pipe held by it would never reach end-of-file.
enum ProcessRunner {
    struct Outcome {
        var status: Int32
        var output: String
    }

    static func run(_ executable: String, _ arguments: [String]) throws(PostgresError) -> Outcome {
        let outputPath = NSTemporaryDirectory() + "staffcast-\(UUID().uuidString).out"
        guard FileManager.default.createFile(atPath: outputPath, contents: nil),
              let output = FileHandle(forWritingAtPath: outputPath) else {
            throw PostgresError(.cluster, "cannot create a temporary file in \(NSTemporaryDirectory())")
        }
        defer { try? FileManager.default.removeItem(atPath: outputPath) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            try? output.close()
            throw PostgresError(.cluster, "cannot run \(executable): \(error.localizedDescription)")
        }
        process.waitUntilExit()
        try? output.close()
        let text = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        return Outcome(status: process.terminationStatus, output: text)
    }
}
