import StaffcastClient
import XCTest

/// When the client warns that a token would cross the network unencrypted.
final class TokenInClearTests: XCTestCase {
    func testPlainHTTPToAnotherHostSendsTheTokenInClear() throws {
        XCTAssertTrue(try APIClient(server: "http://10.0.0.5:8080", token: "t").sendsTokenInClear)
        XCTAssertTrue(try APIClient(server: "ws://staff.example.org", token: "t").sendsTokenInClear)
    }

    func testLoopbackTLSOrNoTokenDoNot() throws {
        for server in ["http://127.0.0.1:8080", "http://localhost:8080", "http://[::1]:8080", "http://127.1.2.3"] {
            XCTAssertFalse(try APIClient(server: server, token: "t").sendsTokenInClear, server)
        }
        XCTAssertFalse(try APIClient(server: "https://staff.example.org", token: "t").sendsTokenInClear)
        XCTAssertFalse(try APIClient(server: "wss://staff.example.org", token: "t").sendsTokenInClear)
        XCTAssertFalse(try APIClient(server: "http://10.0.0.5:8080", token: nil).sendsTokenInClear)
    }
}
