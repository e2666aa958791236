import Foundation
import StaffcastClient
import StaffcastCore
import StaffcastPostgres
import StaffcastServer
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// The transport cannot be stalled (written for the transport rewrite: several service loops,
/// header and write-stall deadlines, connection caps). Real sockets, real PostgreSQL; every
/// deadline here is one of correctness ("closed within 15 s"), never of speed.
///
/// These use `ServerConfiguration.serviceThreads`, `headerTimeout`, `writeStallTimeout`,
/// `maxConnections` and `maxConnectionsPerUser`, which the rewrite honours.
/// The helpers every `…TransportTests` class shares (one class per concept, in Transport/).
class TransportTestCase: IntegrationTestCase {
    var eventID: String { fixture.event.uuidString.lowercased() }
    var messagesPath: String { "/v1/events/\(eventID)/messages" }

    /// A token of the right shape (`sc_` and 43 base64url characters) that was never issued.
    static func wellFormedWrongToken() -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        return "sc_" + String((0..<43).map { _ in alphabet.randomElement()! })
    }

    /// A JSON send body written by hand, so that its UTF-8 bytes are exactly the text's
    /// (the texts used here need no escaping).
    static func sendBody(_ text: String) -> [UInt8] { Array(#"{"message":"\#(text)"}"#.utf8) }

    /// `/healthz` from a fresh connection must answer 200 within `seconds`.
    func assertHealthzAnswers(_ server: TestServer, within seconds: TimeInterval = 2, _ context: String,
                              file: StaticString = #filePath, line: UInt = #line) {
        do {
            let r = try RawSocket.get(port: server.port, "/healthz", timeout: seconds)
            XCTAssertEqual(r.status, 200, "\(context): /healthz answered \(r)", file: file, line: line)
        } catch {
            XCTFail("\(context): /healthz on another connection did not answer within \(seconds) s: \(error)",
                    file: file, line: line)
        }
    }

    /// `/v1/status` with the ops token.
    func status(_ server: TestServer) throws -> [String: Any] {
        let data = try server.api("ops-secret").call("GET", "/v1/status")
        return try XCTUnwrap(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    func connectionCount(_ server: TestServer) -> Int? {
        (try? status(server))?["connections"] as? Int
    }
}
