import Foundation
import StaffcastClient
import StaffcastCore
import StaffcastPostgres
import XCTest

/// A subscribe in the upgrade's URL (`/v1/ws?subscribe=EVENT&since_seq=N&ref=R`) against a real
/// server and PostgreSQL: the client sends no frame and gets `hello`, then the answer.
final class SubscribeInURLTests: IntegrationTestCase {
    override class var startsServer: Bool { true }

    func url(_ event: UUID, sinceSeq: Int64? = nil, ref: String = "u") -> String {
        server.ws + "?subscribe=\(event.uuidString.lowercased())" + (sinceSeq.map { "&since_seq=\($0)" } ?? "") + "&ref=\(ref)"
    }

    func testTheUpgradeIsAnsweredWithHelloAndSubscribedWithoutAFrameFromTheClient() throws {
        let first = try fixture.store.send(as: fixture.owner, SendRequest(eventID: fixture.event, message: "Gates open at 10"))
        let second = try fixture.store.send(as: fixture.owner, SendRequest(eventID: fixture.event, message: "Hall B is closed"))
        let staff = TestSocket(try WebSocketClient(url: url(fixture.event, sinceSeq: first.seq),
                                                   headers: ["Authorization": "Bearer \(fixture.staffToken)"]))
        guard case .hello(let user, _, _, _) = try staff.next() else { return XCTFail("hello comes first") }
        XCTAssertEqual(user.userID, fixture.staff)
        guard case .subscribed(let ref, let event, let history, let unread, let more) = try staff.next() else {
            return XCTFail("subscribed follows hello")
        }
        XCTAssertEqual(ref, "u")
        XCTAssertEqual(event.id, fixture.event)
        XCTAssertEqual(history.map(\.id), [second.id], "exactly what came after since_seq")
        XCTAssertEqual(unread, 2)
        XCTAssertFalse(more)

        // Live from then on, as after a subscribe frame.
        let live = try fixture.store.send(as: fixture.owner, SendRequest(eventID: fixture.event, message: "Doors open"))
        XCTAssertEqual(try staff.expect("message").message?.id, live.id)
        try staff.expectSilence(0.3)
    }

    func testAnEventOutOfReachIsAnErrorCarryingTheRefAndTheConnectionStaysUsable() throws {
        let outsider = TestSocket(try WebSocketClient(url: url(fixture.event, ref: "mine"),
                                                      headers: ["Authorization": "Bearer \(fixture.outsiderToken)"]))
        guard case .hello = try outsider.next() else { return XCTFail("hello comes first") }
        guard case .error(let ref, let error) = try outsider.next() else { return XCTFail("the refusal follows hello") }
        XCTAssertEqual(ref, "mine")
        XCTAssertEqual(error.code, .notFound, "answered as for an event that does not exist (no existence leak)")
        try outsider.send(["op": "ping", "ref": "p"])
        XCTAssertEqual(try outsider.expect("pong").ref, "p")
        XCTAssertEqual(server.subscribers(fixture.event) ?? 0, 0, "nobody was subscribed")
    }

    func testAMalformedSubscribeIsRefusedWithA400InsteadOfTheUpgrade() throws {
        let socket = try RawSocket(port: server.port)
        defer { socket.close() }
        let response = try socket.upgrade(path: "/v1/ws?subscribe=hall-b", token: fixture.staffToken)
        XCTAssertEqual(response.status, 400, "\(response)")
        XCTAssertEqual(response.errorCode, "invalid", "\(response)")
        XCTAssertTrue(response.bodyText.contains("hall-b"), "the sentence names what was sent: \(response.bodyText)")

        // Without a token, the missing token is what the caller learns.
        let anonymous = try RawSocket(port: server.port)
        defer { anonymous.close() }
        XCTAssertEqual(try anonymous.upgrade(path: "/v1/ws?subscribe=hall-b", token: nil).status, 401)
    }
}
