import Foundation
import StaffcastClient
import StaffcastCore
import XCTest

/// A browser test script (`scripts/*-browser-test.py`: Python driving headless Chromium) run
/// as a child process against a test's server, its output collected from any thread. Without
/// chromium and chromedriver the test fails: a browser test never skips.
final class BrowserScript {
    let process = Process()
    let output = OutputCollector()
    private let pipe = Pipe()

    /// Starts `scripts/<name>` with `arguments`; nil after failing the test when Debian's
    /// chromium or chromium-driver is missing.
    static func start(_ name: String, _ arguments: [String], file: StaticString = #filePath, line: UInt = #line) throws
        -> BrowserScript? {
        let fm = FileManager.default
        guard fm.isExecutableFile(atPath: "/usr/bin/chromedriver"),
              ["/usr/bin/chromium", "/usr/bin/chromium-browser"].contains(where: fm.isExecutableFile(atPath:)) else {
            XCTFail("\(name) needs Debian's chromium and chromium-driver: run scripts/install-deps.sh (or make test)",
                    file: file, line: line)
            return nil
        }
        let script = BrowserScript()
        try script.run(TestDatabase.packageRoot.appendingPathComponent("scripts/" + name).path, arguments)
        return script
    }

    private func run(_ path: String, _ arguments: [String]) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", path] + arguments
        process.standardOutput = pipe
        process.standardError = pipe
        let output = output
        pipe.fileHandleForReading.readabilityHandler = { h in output.append(h.availableData) }
        try process.run()
    }

    /// Waits for the script to print `marker` on a line of its own; fails the test if it does not in time.
    func reached(_ marker: String, timeout: TimeInterval = 120, file: StaticString = #filePath, line: UInt = #line) -> Bool {
        // Stops waiting once the script has ended (a failed step) and the marker is not there.
        _ = waitUntil(timeout) { output.has(marker) || !process.isRunning }
        let ok = output.wait(for: marker, timeout: 0.2)
        if !ok { XCTFail("the script did not get to \(marker):\n\(output.text)", file: file, line: line) }
        return ok
    }

    /// The next frame with `op` on `socket`, waited for only while the script runs: when the
    /// script has ended (a failed step), the test fails at once with its output instead of
    /// waiting out `timeout`.
    func expect(_ op: String, on socket: TestSocket, timeout: TimeInterval, file: StaticString = #filePath, line: UInt = #line)
        throws -> ServerFrame {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let scriptEnded = !process.isRunning
            if let frame = try socket.nextOrNil(timeout: min(1, max(0.01, deadline.timeIntervalSinceNow))) {
                if frame.op == op { return frame }
                continue
            }
            if scriptEnded {
                XCTFail("the browser script ended before the \(op) frame came:\n\(output.text)", file: file, line: line)
                throw ClientError.timeout
            }
        }
        XCTFail("no \(op) frame within \(timeout) s; the script said:\n\(output.text)", file: file, line: line)
        throw ClientError.timeout
    }

    /// Waits (at most `timeout`) for the script to end, and checks that it ended well: status 0 and "OK".
    func finish(within timeout: TimeInterval, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertTrue(waitUntil(timeout) { !process.isRunning }, "the browser script did not finish:\n\(output.text)",
                      file: file, line: line)
        stop()
        pipe.fileHandleForReading.readabilityHandler = nil
        output.append(pipe.fileHandleForReading.readDataToEndOfFile())
        XCTAssertEqual(process.terminationStatus, 0, output.text, file: file, line: line)
        XCTAssertTrue(output.text.contains("\nOK"), output.text, file: file, line: line)
    }

    /// Ends the script if it still runs.
    func stop() {
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
    }
}
