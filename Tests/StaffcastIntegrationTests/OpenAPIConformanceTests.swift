import Foundation
import XCTest

/// docs/openapi.yaml against a live server: schemathesis (PyPI; nobody here wrote it) reads the
/// description the server itself serves at /v1/openapi.yaml, generates requests for every
/// route — valid ones, and invalid ones at the edges of each schema — with real ids of a real
/// event, and checks each answer: no 5xx, a documented status, a documented content type and a
/// body that matches its schema, 405 for methods a path does not take.
final class OpenAPIConformanceTests: IntegrationTestCase {
    override func setUpWithError() throws {
        try super.setUpWithError()
        // The generator sends far faster than people do: lift the send limits it would hit.
        try startServer { c in
            c.sendBurst = 1_000_000
            c.sendRatePerSecond = 1_000_000
        }
    }

    func testTheServedDescriptionIsTheOneInDocs() throws {
        let answer = try server.api(nil).raw("GET", "/v1/openapi.yaml")
        XCTAssertEqual(answer.status, 200)
        let served = answer.body
        let file = try Data(contentsOf: TestDatabase.packageRoot.appendingPathComponent("docs/openapi.yaml"))
        XCTAssertEqual(served, file, "the binary embeds docs/openapi.yaml as it is in the repository")
    }

    func testEveryRouteAnswersAsDescribed() throws {
        let api = try server.api(fixture.ownerToken)
        let message = try api.sendMessage(event: fixture.event, message: "Gates open in 15 minutes", type: nil, priority: nil,
                                          expiresInMinutes: nil)
        // Real ids, so that requests reach the handlers instead of stopping at not_found.
        let config = """
        [parameters]
        "path.event_id" = "\(fixture.event.uuidString.lowercased())"
        "path.message_id" = "\(message.id.uuidString.lowercased())"
        "path.user_id" = "\(fixture.staff.uuidString.lowercased())"
        """
        let dir = NSTemporaryDirectory() + "sc-openapi-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try config.write(toFile: dir + "/schemathesis.toml", atomically: true, encoding: .utf8)

        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.currentDirectoryURL = URL(fileURLWithPath: dir)
        p.arguments = ["python3", "-m", "schemathesis.cli", "run", server.http + "/v1/openapi.yaml",
                       "--url", server.http,
                       "-H", "Authorization: Bearer \(fixture.ownerToken)",
                       "--checks", "not_a_server_error,status_code_conformance,content_type_conformance,"
                           + "response_schema_conformance,response_headers_conformance,unsupported_method",
                       "--phases", "examples,coverage,fuzzing",
                       "--max-examples", "12", "--seed", "1", "--workers", "1",
                       "--generation-database", "none", "--request-timeout", "10", "--no-color"]
        let out = Pipe()
        p.standardOutput = out
        p.standardError = out
        try p.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        XCTAssertEqual(p.terminationStatus, 0, "schemathesis found answers that do not match docs/openapi.yaml:\n\(text.suffix(6000))")
        XCTAssertTrue(text.contains("Tested:"), "schemathesis did not test anything:\n\(text.suffix(2000))")
        // The server is still there and serving after the run.
        XCTAssertEqual(try api.raw("GET", "/healthz").status, 200)
    }
}
