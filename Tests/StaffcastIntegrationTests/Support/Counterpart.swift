import Foundation
import XCTest

/// A real counterpart for delivery tests (`scripts/test-counterparts.py push|webhook|smtp`): a
/// child process whose first stdout line describes it and whose later lines are the requests it
/// received, as JSON. Ends when this object is stopped (its stdin closes) or deinitialised.
final class Counterpart: @unchecked Sendable {
    let process = Process()
    private let input = Pipe()
    private let lock = NSLock()
    private var buffer = Data()
    private var lines: [[String: Any]] = []
    private var stderrText = Data()
    /// The first line: where it listens and what it made.
    private(set) var info: [String: Any] = [:]

    init(_ arguments: [String], file: StaticString = #filePath, line: UInt = #line) throws {
        let script = TestDatabase.packageRoot.appendingPathComponent("scripts/test-counterparts.py").path
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script] + arguments
        let out = Pipe(), err = Pipe()
        process.standardInput = input
        process.standardOutput = out
        process.standardError = err
        out.fileHandleForReading.readabilityHandler = { [weak self] h in self?.take(h.availableData) }
        err.fileHandleForReading.readabilityHandler = { [weak self] h in
            let d = h.availableData
            self?.lock.lock(); self?.stderrText.append(d); self?.lock.unlock()
        }
        try process.run()
        var first: [String: Any]?
        waitUntil(30, poll: 0.05) {
            first = lock.withLock { lines.first }
            return first != nil || !process.isRunning
        }
        if let first {
            info = first
            return
        }
        XCTFail("the counterpart \(arguments) did not start (needs python3 with cryptography, http-ece, aiosmtpd: scripts/install-deps.sh): \(stderr)",
                file: file, line: line)
        throw CounterpartError.didNotStart
    }

    enum CounterpartError: Error { case didNotStart }

    var port: Int { info["port"] as? Int ?? 0 }
    var stderr: String { lock.withLock { String(decoding: stderrText, as: UTF8.self) } }

    private func take(_ data: Data) {
        lock.withLock {
            buffer.append(data)
            while let newline = buffer.firstIndex(of: 0x0A) {
                let line = buffer[buffer.startIndex..<newline]
                buffer.removeSubrange(buffer.startIndex...newline)
                if let object = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any] { lines.append(object) }
            }
        }
    }

    /// Every request received so far (the first line excluded).
    var requests: [[String: Any]] { lock.withLock { Array(lines.dropFirst()) } }

    /// Waits until `count` requests satisfy `predicate`; returns them (fails the test on timeout).
    @discardableResult
    func wait(for count: Int = 1, timeout: TimeInterval = 30, file: StaticString = #filePath, line: UInt = #line,
              _ predicate: ([String: Any]) -> Bool) -> [[String: Any]] {
        var found: [[String: Any]] = []
        if waitUntil(timeout, { found = requests.filter(predicate); return found.count >= count }) { return found }
        XCTFail("the counterpart received \(found.count) of \(count) expected requests within \(timeout) s; all: \(requests); stderr: \(stderr)",
                file: file, line: line)
        return found
    }

    func stop() {
        try? input.fileHandleForWriting.close()
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
    }

    deinit { if process.isRunning { process.terminate() } }
}
