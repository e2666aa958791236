import Foundation

/// Runs a helper program (initdb, pg_ctl, runuser) to completion and captures its output.
enum ProcessRunner {
    struct Outcome {
        var status: Int32
        var output: String
    }

    static func run(_ executable: String, _ arguments: [String]) throws(PostgresError) -> Outcome {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        process.standardInput = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            throw PostgresError(.cluster, "cannot run \(executable): \(error.localizedDescription)")
        }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Outcome(status: process.terminationStatus, output: String(decoding: data, as: UTF8.self))
    }
}
