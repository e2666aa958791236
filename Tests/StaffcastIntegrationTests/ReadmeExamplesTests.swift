import Foundation
@testable import StaffcastPostgres
import XCTest

/// The README runs as written: scripts/readme-test.sh extracts every ```sh block of README.md
/// and runs it in order against a real `staffcast serve` (the built binary, its own embedded
/// PostgreSQL, a free loopback port), failing on the first command that fails. The rule for
/// which blocks and lines run is at the top of the script and in the README.
final class ReadmeExamplesTests: XCTestCase {
    func testEveryShellExampleOfTheReadmeRunsAsWritten() throws {
        let root = TestDatabase.packageRoot
        let binDir = URL(fileURLWithPath: CommandLineTests.binary).deletingLastPathComponent().path
        // Bounded: a README command that runs on without being marked "until Ctrl-C" fails
        // the test (status 124) instead of hanging it; timeout stops the whole process group.
        let outcome = try ProcessRunner.run("/usr/bin/timeout", ["--kill-after=10", "900", "/bin/bash",
                                                                 root.appendingPathComponent("scripts/readme-test.sh").path, binDir])
        let verdict = outcome.output.split(separator: "\n").last { $0.hasPrefix("README docs test:") }.map(String.init)
            ?? (outcome.status == 124 ? "README docs test: FAILED: a command ran for 15 minutes (the last `$` line above); mark long-running ones \"until Ctrl-C\""
                                      : "README docs test: FAILED (status \(outcome.status))")
        print(verdict)
        XCTAssertEqual(outcome.status, 0, "\(verdict)\n\(outcome.output.suffix(6_000))")
        XCTAssertTrue(verdict.contains("passed"), outcome.output)
    }
}
