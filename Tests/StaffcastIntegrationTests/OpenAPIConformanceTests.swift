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

    /// The paths of docs/openapi.yaml (its `paths:` keys, two spaces in) in order, each with its
    /// number of operations (the methods under it, four spaces in).
    static let describedPaths: [(path: String, operations: Int)] = {
        let file = TestDatabase.packageRoot.appendingPathComponent("docs/openapi.yaml")
        let text = (try? String(contentsOf: file, encoding: .utf8)) ?? ""
        let methods = Set(["get", "put", "post", "delete", "patch", "head", "options", "trace"].map { "    \($0):" })
        var paths: [(path: String, operations: Int)] = []
        for line in text.split(separator: "\n") {
            if line.hasPrefix("  /") && line.hasSuffix(":") {
                paths.append((String(line.dropFirst(2).dropLast()), 0))
            } else if methods.contains(String(line)), !paths.isEmpty {
                paths[paths.count - 1].operations += 1
            }
        }
        return paths
    }()

    /// The routes are checked in `parts` runs of schemathesis, each on every `parts`-th path and
    /// each a test of its own (its own server and event), so that `make test`'s parallel
    /// workers share them: in one run they were the longest test by far (99 s of a 5-minute
    /// phase). Every path is in exactly one part, with the same examples per operation as in
    /// one run, and each run says it selected every operation of its paths. Left out, as one
    /// run on the whole description left it out: the route that serves the description
    /// (schemathesis reads it as YAML, not as the string it is described as), which
    /// `testTheServedDescriptionIsTheOneInDocs` checks.
    static let parts = 4
    static let servedDescription = "/v1/openapi.yaml"

    static func paths(ofPart part: Int) -> [(path: String, operations: Int)] {
        describedPaths.filter { $0.path != servedDescription }.enumerated()
            .filter { $0.offset % parts == part }.map(\.element)
    }

    func testTheRoutesAreSplitIntoPartsThatCoverEveryPath() {
        let all = Self.describedPaths.map(\.path)
        XCTAssertGreaterThan(all.count, 30, "docs/openapi.yaml's paths were not found")
        XCTAssertEqual(Set(all).count, all.count)
        XCTAssertEqual((0..<Self.parts).flatMap { Self.paths(ofPart: $0).map(\.path) }.sorted(),
                       all.filter { $0 != Self.servedDescription }.sorted())
        XCTAssertTrue(Self.describedPaths.allSatisfy { $0.operations > 0 }, "\(Self.describedPaths)")
    }

    func testEveryRouteAnswersAsDescribedPart1() throws { try checkRoutes(ofPart: 0) }
    func testEveryRouteAnswersAsDescribedPart2() throws { try checkRoutes(ofPart: 1) }
    func testEveryRouteAnswersAsDescribedPart3() throws { try checkRoutes(ofPart: 2) }
    func testEveryRouteAnswersAsDescribedPart4() throws { try checkRoutes(ofPart: 3) }

    private func checkRoutes(ofPart part: Int) throws {
        let paths = Self.paths(ofPart: part)
        // Each path whole and literally (its braces and dots escaped).
        let special = Set("\\^$.|?*+()[]{}")
        let regex = "^(" + paths.map { path, _ in
            path.map { special.contains($0) ? "\\\($0)" : String($0) }.joined()
        }.joined(separator: "|") + ")$"
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
        p.arguments = ["python3", "-m", "schemathesis.cli", "run", server.http + Self.servedDescription,
                       "--url", server.http, "--include-path-regex", regex,
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
        // Its summary: every operation of this part's paths selected and tested.
        let operations = paths.map(\.operations).reduce(0, +)
        XCTAssertNotNil(text.firstMatch(of: try Regex("Selected: \(operations)/[0-9]+\\s+Tested: \(operations)\\s")),
                        "not all \(operations) operations of this part were tested:\n\(text.suffix(2000))")
        // The server is still there and serving after the run.
        XCTAssertEqual(try api.raw("GET", "/healthz").status, 200)
    }
}
