import Foundation
import StaffcastClient
import StaffcastCore
import XCTest

/// `GET /v1/events/{id}/status?limit=N&offset=M` and `GET /v1/messages/{id}/receipts?limit=N`
/// (what the console asks at 10,000 staff) against a real server and database: exact counts of
/// everyone, the right first N, and answers without `limit` as they always were.
final class LimitedReportsTests: IntegrationTestCase {
    override class var startsServer: Bool { true }

    private var statusPath: String { "/v1/events/\(fixture.event.uuidString.lowercased())/status" }

    private func object(_ token: String, _ path: String, _ query: [String: String] = [:]) throws -> [String: Any] {
        let r = try server.api(token).raw("GET", path, query: query)
        XCTAssertEqual(r.status, 200, String(decoding: r.body, as: UTF8.self))
        return try XCTUnwrap(try JSONSerialization.jsonObject(with: r.body) as? [String: Any])
    }

    private func refusal(_ path: String, _ query: [String: String], _ words: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let r = try server.api(fixture.ownerToken).raw("GET", path, query: query)
        let text = String(decoding: r.body, as: UTF8.self)
        XCTAssertEqual(r.status, 400, "\(query): \(text)", file: file, line: line)
        XCTAssertTrue(text.contains(words), "\(query): \(text)", file: file, line: line)
    }

    /// The fields of a person that do not move between two requests (rtt does).
    private func steady(_ person: [String: Any]) -> NSDictionary {
        person.filter { ["user_id", "display_name", "access_level", "connected", "connections", "unread_count",
                         "last_read_seq", "last_read_message_at"].contains($0.key) } as NSDictionary
    }

    func testALimitedStatusCountsEveryoneAndListsTheConsolesFirstN() throws {
        // 12 people: the fixture's three and nine more, names in mixed case; two connected.
        var tokens: [String: String] = [:]
        for name in ["kim 1", "Kim 2", "Lee", "ada", "Zed", "Mo", "bo", "Cy", "Kim 3"] {
            tokens[name] = try fixture.person(name).token
        }
        let first = try fixture.store.send(as: fixture.owner, SendRequest(eventID: fixture.event, message: "one"))
        _ = try fixture.store.send(as: fixture.owner, SendRequest(eventID: fixture.event, message: "two"))
        _ = try fixture.store.markRead(as: fixture.staff, message: first.id)
        let sam = try server.subscriber(fixture.staffToken, fixture.event)
        let mo = try server.subscriber(try XCTUnwrap(tokens["Mo"]), fixture.event)
        defer { sam.close(); mo.close() }

        // Without limit: the whole roster by name, and no field of the limited answer.
        let whole = try object(fixture.ownerToken, statusPath)
        XCTAssertEqual(Set(whole.keys), ["event_id", "node", "subscribers", "roster", "staff"])
        let everyone = try XCTUnwrap(whole["staff"] as? [[String: Any]])
        XCTAssertEqual(whole["roster"] as? Int, 12)
        XCTAssertEqual(everyone.count, 12)
        XCTAssertEqual(everyone.filter { $0["connected"] as? Bool == true }.count, 2)

        // The console's order, worked out here from the whole answer.
        let expected = everyone.sorted { a, b in
            let ka = (a["connected"] as? Bool == true ? 1 : 0, (a["display_name"] as? String ?? "").lowercased(),
                      a["display_name"] as? String ?? "", (a["user_id"] as? String ?? "").uppercased())
            let kb = (b["connected"] as? Bool == true ? 1 : 0, (b["display_name"] as? String ?? "").lowercased(),
                      b["display_name"] as? String ?? "", (b["user_id"] as? String ?? "").uppercased())
            return ka < kb
        }
        XCTAssertEqual(expected.prefix(3).compactMap { $0["display_name"] as? String }, ["ada", "Adam Admin", "bo"])
        XCTAssertEqual(expected.suffix(2).compactMap { $0["display_name"] as? String }, ["Mo", "Sam Staff"])

        let page = try object(fixture.ownerToken, statusPath, ["limit": "4"])
        XCTAssertEqual(page["roster"] as? Int, 12)
        XCTAssertEqual(page["connected"] as? Int, 2)
        XCTAssertEqual(page["not_connected"] as? Int, 10)
        XCTAssertEqual(page["left_out"] as? Int, 8)
        XCTAssertEqual(page["limit"] as? Int, 4)
        XCTAssertEqual(page["offset"] as? Int, 0)
        XCTAssertEqual(page["subscribers"] as? Int, whole["subscribers"] as? Int)
        let shown = try XCTUnwrap(page["staff"] as? [[String: Any]])
        XCTAssertEqual(shown.map(steady), expected.prefix(4).map(steady), "the first 4, each as in the whole answer")

        // Pages of 5 put together are the whole roster in the console's order.
        var paged: [[String: Any]] = []
        for offset in [0, 5, 10] {
            let p = try object(fixture.ownerToken, statusPath, ["limit": "5", "offset": String(offset)])
            paged += try XCTUnwrap(p["staff"] as? [[String: Any]])
            XCTAssertEqual(p["left_out"] as? Int, max(0, 12 - offset - 5))
            XCTAssertEqual(p["connected"] as? Int, 2)
        }
        XCTAssertEqual(paged.map(steady), expected.map(steady))
        let sams = paged.filter { $0["display_name"] as? String == "Sam Staff" }
        XCTAssertEqual(sams.first?["unread_count"] as? Int, 1, "Sam read one of two")
        XCTAssertEqual(sams.first?["connected"] as? Bool, true)
        // The ops token may page too; staff may not.
        XCTAssertEqual(try server.api("ops-secret").raw("GET", statusPath, query: ["limit": "1"]).status, 200)
        XCTAssertEqual(try server.api(fixture.staffToken).raw("GET", statusPath, query: ["limit": "1"]).status, 403)
    }

    func testBadStatusParametersAreRefusedByName() throws {
        try refusal(statusPath, ["limit": "0"], "limit must be a whole number from 1 to 10000")
        try refusal(statusPath, ["limit": "lots"], "limit must be a whole number")
        try refusal(statusPath, ["limit": "3", "offset": "-1"], "offset must be a whole number")
        try refusal(statusPath, ["offset": "3"], "give limit too")
        try refusal(statusPath, ["limt": "3"], "did you mean 'limit'")
    }

    func testLimitedReceiptsHaveExactCountsAndTheFirstNames() throws {
        for name in ["Kim 1", "Kim 2", "Lee", "Ada"] { _ = try fixture.person(name) }
        let message = try fixture.store.send(as: fixture.owner, SendRequest(eventID: fixture.event, message: "Gates open"))
        let readers = try ["Zoe", "Bo", "Cy"].map { try fixture.person($0).id }
        for reader in readers { _ = try fixture.store.markRead(as: reader, message: message.id) }
        _ = try fixture.store.markRead(as: fixture.staff, message: message.id)
        let path = "/v1/messages/\(message.id.uuidString.lowercased())/receipts"

        // Without limit: as it always was (no unread_count, no left-out counts).
        let whole = try object(fixture.ownerToken, path)
        XCTAssertEqual(Set(whole.keys), ["event_id", "message_id", "read_count", "read_by", "unread_by", "totals"])
        let read = try XCTUnwrap(whole["read_by"] as? [[String: Any]])
        let unread = try XCTUnwrap(whole["unread_by"] as? [[String: Any]])
        XCTAssertEqual(read.count, 4)
        XCTAssertEqual(unread.count, 5, "Adam Admin, Ada, Kim 1, Kim 2, Lee (not the sender)")
        XCTAssertEqual(whole["read_count"] as? Int, 4)

        let page = try object(fixture.ownerToken, path, ["limit": "2"])
        XCTAssertEqual(page["read_count"] as? Int, 4)
        XCTAssertEqual(page["unread_count"] as? Int, 5)
        XCTAssertEqual(page["read_by_left_out"] as? Int, 2)
        XCTAssertEqual(page["unread_by_left_out"] as? Int, 3)
        XCTAssertEqual(page["totals"] as? NSDictionary, whole["totals"] as? NSDictionary)
        XCTAssertEqual((page["read_by"] as? [[String: Any]])?.map { $0 as NSDictionary }, read.prefix(2).map { $0 as NSDictionary })
        XCTAssertEqual((page["unread_by"] as? [[String: Any]])?.map { $0 as NSDictionary }, unread.prefix(2).map { $0 as NSDictionary })
        XCTAssertEqual(page["message_id"] as? String, whole["message_id"] as? String)

        // A limit above the lists: everyone, nothing left out.
        let all = try object(fixture.ownerToken, path, ["limit": "100"])
        XCTAssertEqual((all["read_by"] as? [[String: Any]])?.count, 4)
        XCTAssertEqual(all["unread_by_left_out"] as? Int, 0)

        // The CSV always lists everyone; a limit with it is refused, not ignored.
        let csv = try server.api(fixture.ownerToken).raw("GET", path, query: ["format": "csv"])
        XCTAssertEqual(csv.status, 200)
        XCTAssertEqual(csv.body.filter { $0 == 0x0A }.count, 1 + 9, "a header and everyone")
        try refusal(path, ["format": "csv", "limit": "2"], "always lists everyone")
        try refusal(path, ["limit": "0"], "limit must be a whole number from 1 to 10000")
        try refusal(path, ["limited": "2"], "did you mean 'limit'")
        // Staff see no receipts, limited or not.
        XCTAssertEqual(try server.api(fixture.staffToken).raw("GET", path, query: ["limit": "2"]).status, 403)
    }
}
