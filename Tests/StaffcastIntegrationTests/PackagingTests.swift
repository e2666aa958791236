import Foundation
import XCTest

/// `make install` into a folder (DESTDIR), as a package build would: the binary, the systemd
/// unit, the configuration and the docs land where the unit expects them; systemd itself checks
/// the unit (`systemd-analyze verify`) and rates its hardening (`systemd-analyze security`).
final class PackagingTests: XCTestCase {
    private func sh(_ command: String, env: [String: String] = [:]) throws -> (status: Int32, output: String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/bash")
        p.arguments = ["-c", command]
        p.currentDirectoryURL = URL(fileURLWithPath: NSTemporaryDirectory())
        var environment = ProcessInfo.processInfo.environment
        environment.merge(env) { $1 }
        p.environment = environment
        let out = Pipe()
        p.standardOutput = out
        p.standardError = out
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    func testInstallIntoAFolderGivesAVerifiedHardenedUnit() throws {
        let dest = NSTemporaryDirectory() + "sc-install-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: dest) }
        let script = TestDatabase.packageRoot.appendingPathComponent("scripts/install.sh").path
        let install = try sh("'\(script)' '\(CommandLineTests.binary)'", env: ["DESTDIR": dest, "PREFIX": "/usr/local"])
        XCTAssertEqual(install.status, 0, install.output)
        let fm = FileManager.default
        let installed = dest + "/usr/local/bin/staffcast"
        XCTAssertTrue(fm.isExecutableFile(atPath: installed))
        XCTAssertTrue(fm.fileExists(atPath: dest + "/usr/local/share/doc/staffcast/openapi.yaml"))
        let conf = try String(contentsOfFile: dest + "/etc/staffcast/staffcast.yaml", encoding: .utf8)
        XCTAssertTrue(conf.contains("data_dir: \"/var/lib/staffcast\""), "the installed configuration keeps state under /var/lib")

        // A second install keeps an edited configuration.
        try (conf + "\n# edited\n").write(toFile: dest + "/etc/staffcast/staffcast.yaml", atomically: true, encoding: .utf8)
        XCTAssertEqual(try sh("'\(script)' '\(CommandLineTests.binary)'", env: ["DESTDIR": dest]).status, 0)
        XCTAssertTrue(try String(contentsOfFile: dest + "/etc/staffcast/staffcast.yaml", encoding: .utf8).hasSuffix("# edited\n"))

        // The installed binary runs from anywhere.
        let help = try sh("'\(installed)' --help")
        XCTAssertEqual(help.status, 0, help.output)
        XCTAssertTrue(help.output.contains("serve"), help.output)

        // systemd checks the unit as it would load it (ExecStart pointed at the folder's binary).
        let unitText = try String(contentsOfFile: dest + "/etc/systemd/system/staffcast.service", encoding: .utf8)
        XCTAssertTrue(unitText.contains("ExecStart=/usr/local/bin/staffcast serve --config /etc/staffcast/staffcast.yaml"))
        let unit = dest + "/staffcast.service"
        try unitText.replacingOccurrences(of: "ExecStart=/usr/local/bin/staffcast", with: "ExecStart=\(installed)")
            .write(toFile: unit, atomically: true, encoding: .utf8)
        let verify = try sh("systemd-analyze verify --man=no '\(unit)'")
        XCTAssertEqual(verify.status, 0, "systemd-analyze verify: \(verify.output)")
        XCTAssertFalse(verify.output.contains("Unknown"), verify.output)

        let security = try sh("systemd-analyze security --offline=true '\(unit)' 2>&1 | tail -n 1")
        XCTAssertEqual(security.status, 0, security.output)
        // "→ Overall exposure level for staffcast.service: 1.7 OK 🙂": 0 is best, 10 worst.
        let score = security.output.split(separator: ":").last?.split(separator: " ").first.flatMap { Double($0) }
        let exposure = try XCTUnwrap(score, "no exposure level in: \(security.output)")
        XCTAssertLessThanOrEqual(exposure, 2.0, "the unit lost hardening: \(security.output)")
    }
}
