import Foundation
import StaffcastCore
import XCTest

/// `GET /v1/push/subscriptions`: what the staff app asks before it hands a hidden phone over to
/// push. Each sign-in (token) sees the subscriptions registered with it, none once deleted.
extension PushTests {
    func listed(_ token: String?) throws -> (status: Int, ids: [UUID]) {
        let r = try server.api(token).raw("GET", "/v1/push/subscriptions")
        let body = try? JSONSerialization.jsonObject(with: r.body) as? [String: Any]
        let ids = (body?["subscriptions"] as? [[String: Any]] ?? []).compactMap { ($0["id"] as? String).flatMap(UUID.init(uuidString:)) }
        return (r.status, ids)
    }

    func testASignInListsTheSubscriptionsRegisteredWithIt() throws {
        let phone = try fixture.store.issueToken(user: fixture.staff)
        XCTAssertEqual(try listed(phone).status, 200)
        XCTAssertEqual(try listed(phone).ids, [], "none yet")
        let onPhone = try subscribe(phone, "ok")
        let onLaptop = try subscribe(fixture.staffToken, "ok", device: "/laptop")
        XCTAssertEqual(try listed(phone).ids, [onPhone], "the phone's own, not the same person's laptop's")
        XCTAssertEqual(try listed(fixture.staffToken).ids, [onLaptop])
        XCTAssertEqual(try listed(fixture.ownerToken).ids, [], "nobody else's")
        XCTAssertEqual(try listed(nil).status, 401)

        let deleted = try server.api(phone).raw("DELETE", "/v1/push/subscriptions/\(id(onPhone))")
        XCTAssertEqual(deleted.status, 200)
        XCTAssertEqual(try listed(phone).ids, [], "gone once deleted (as after a push service's 410)")
        XCTAssertEqual(try listed(fixture.staffToken).ids, [onLaptop])
    }
}
