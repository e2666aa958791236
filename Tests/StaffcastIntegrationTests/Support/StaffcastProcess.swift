import Foundation

/// A real `staffcast serve` process: started with arguments, its port read from the banner,
/// its stderr kept (read on a background thread so the pipe never fills).
final class StaffcastProcess: @unchecked Sendable {
    let process = Process()
    private(set) var port = 0
    private var errText = ""
    private let lock = NSLock()

    /// Starts `staffcast args…` (binary `binary`, default the test binary) in `cwd`, with `env`
    /// over this process's environment minus `unset`. Waits up to 90 s for the banner unless
    /// `expectBanner` is false.
    init(_ args: [String], binary: String = CommandLineTests.binary, cwd: URL? = nil, env: [String: String] = [:],
         unset: [String] = [], expectBanner: Bool = true) throws {
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = args
        var environment = ProcessInfo.processInfo.environment
        for k in unset { environment[k] = nil }
        environment.merge(env) { $1 }
        process.environment = environment
        if let cwd { process.currentDirectoryURL = cwd }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let errHandle = err.fileHandleForReading
        Thread.detachNewThread { [self] in
            while true {
                let chunk = errHandle.availableData
                if chunk.isEmpty { return }
                lock.lock(); errText += String(decoding: chunk, as: UTF8.self); lock.unlock()
            }
        }
        guard expectBanner else { return }
        let (found, text) = ServeBanner.port(from: out.fileHandleForReading, seconds: 90)
        port = found
        if port == 0 {
            if process.isRunning { process.terminate() }
            process.waitUntilExit()
            throw CommandFailureForTests("staffcast serve printed no banner: stdout \(text) stderr \(stderr)")
        }
        // Keep draining stdout so the server never blocks on it.
        let outHandle = out.fileHandleForReading
        Thread.detachNewThread { while !outHandle.availableData.isEmpty {} }
    }

    var stderr: String { lock.lock(); defer { lock.unlock() }; return errText }

    /// True once the process has ended: Foundation saw it, or the kernel shows it as a zombie
    /// (or gone). (Foundation did not always notice a SIGKILLed child in time here.)
    var hasExited: Bool {
        guard process.isRunning else { return true }
        guard let stat = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return true }
        return stat[stat.index(after: close)...].trimmingCharacters(in: .whitespaces).hasPrefix("Z")
    }

    /// Waits up to `seconds` for the process to end; its exit status (-1 when Foundation has not
    /// collected it yet), or nil when it still runs.
    func wait(seconds: TimeInterval) -> Int32? {
        guard waitUntil(seconds, poll: 0.02, { hasExited }) else { return nil }
        // Give Foundation a moment to collect the status.
        waitUntil(2, poll: 0.02) { !process.isRunning }
        return process.isRunning ? -1 : process.terminationStatus
    }

    /// Waits until stderr contains `text` (up to `seconds`).
    func waitForStderr(_ text: String, seconds: TimeInterval = 10) -> Bool {
        waitUntil(seconds, poll: 0.02) { stderr.contains(text) }
    }

    /// SIGTERM, then waits (up to 20 s) for the graceful stop.
    func stop() {
        if !hasExited { process.terminate() }
        _ = wait(seconds: 20)
    }

    /// SIGKILL; returns once the process is gone (deadline 10 s).
    func kill9() {
        kill(process.processIdentifier, SIGKILL)
        _ = wait(seconds: 10)
    }
}

struct CommandFailureForTests: Error, CustomStringConvertible {
    var description: String
    init(_ d: String) { description = d }
}
