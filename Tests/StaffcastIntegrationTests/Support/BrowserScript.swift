import Foundation
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
        let ok = output.wait(for: marker, timeout: timeout)
        if !ok { XCTFail("the script did not get to \(marker):\n\(output.text)", file: file, line: line) }
        return ok
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
