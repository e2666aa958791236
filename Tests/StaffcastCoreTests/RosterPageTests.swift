import Foundation
import StaffcastCore
import XCTest

/// `GET /v1/events/{id}/status?limit=N&offset=M`: the parameters, the console's order and the
/// counts of everyone.
final class RosterPageTests: XCTestCase {
    private func person(_ name: String, _ connected: Bool, _ id: Int = 0) -> RosterPage.Person {
        RosterPage.Person(userID: UUID(uuidString: String(format: "00000000-0000-0000-0000-%012d", id))!, displayName: name,
                          connected: connected)
    }

    func testNoLimitIsTheWholeRoster() throws {
        XCTAssertNil(try RosterPage.from(query: [:]))
        XCTAssertNil(try RosterPage.from(query: ["access_token": "x"]))
        XCTAssertNil(try RosterPage.from(query: ["limit": ""]))
    }

    func testLimitAndOffsetAreRead() throws {
        XCTAssertEqual(try RosterPage.from(query: ["limit": "300"]), RosterPage(limit: 300, offset: 0))
        XCTAssertEqual(try RosterPage.from(query: ["limit": "10", "offset": "20"]), RosterPage(limit: 10, offset: 20))
        XCTAssertEqual(try RosterPage.from(query: ["limit": "10000"])?.limit, RosterPage.maxLimit)
    }

    func testBadValuesAreRefusedByName() {
        for bad in [["limit": "0"], ["limit": "-3"], ["limit": "ten"], ["limit": "10001"], ["limit": "1.5"],
                    ["limit": "5", "offset": "-1"], ["limit": "5", "offset": "x"]] {
            XCTAssertThrowsError(try RosterPage.from(query: bad), "\(bad)") { error in
                let e = error as? StaffcastError
                XCTAssertEqual(e?.code, .invalid)
                XCTAssertTrue(e?.message.contains(bad["offset"] == nil ? "limit must be a whole number from 1 to 10000" : "offset") ?? false,
                              e?.message ?? "")
            }
        }
        // offset alone would page an answer that is not paged.
        XCTAssertThrowsError(try RosterPage.from(query: ["offset": "5"])) { error in
            XCTAssertTrue((error as? StaffcastError)?.message.contains("give limit too") ?? false)
        }
    }

    func testUnknownParametersAreRefusedWithAHint() {
        XCTAssertThrowsError(try RosterPage.from(query: ["limt": "5"])) { error in
            let message = (error as? StaffcastError)?.message ?? ""
            XCTAssertTrue(message.contains("'limt'") && message.contains("did you mean 'limit'"), message)
        }
    }

    func testTheConsoleOrderIsNotConnectedFirstThenByNameIgnoringCase() {
        let people = [person("bob", false, 1), person("Alice", true, 2), person("Carol", false, 3), person("alice", false, 4),
                      person("Dan", true, 5)]
        XCTAssertEqual(RosterPage.inConsoleOrder(people).map(\.displayName), ["alice", "bob", "Carol", "Alice", "Dan"])
    }

    func testTheSameNameIsOrderedById() {
        let people = [person("Sam", false, 9), person("Sam", false, 3)]
        XCTAssertEqual(RosterPage.inConsoleOrder(people).map(\.userID), [people[1].userID, people[0].userID])
    }

    func testASelectionCountsEveryoneAndHoldsThePage() {
        let people = (0..<10).map { person("Staff \($0)", $0 % 3 == 0, $0) }
        let first = RosterPage(limit: 4).select(people)
        XCTAssertEqual(first.roster, 10)
        XCTAssertEqual(first.connected, 4)
        XCTAssertEqual(first.notConnected, 6)
        XCTAssertEqual(first.people.map(\.displayName), ["Staff 1", "Staff 2", "Staff 4", "Staff 5"])
        XCTAssertEqual(first.leftOut, 6)
        let second = RosterPage(limit: 4, offset: 4).select(people)
        XCTAssertEqual(second.people.map(\.displayName), ["Staff 7", "Staff 8", "Staff 0", "Staff 3"])
        XCTAssertEqual(second.leftOut, 2)
        let last = RosterPage(limit: 4, offset: 8).select(people)
        XCTAssertEqual(last.people.map(\.displayName), ["Staff 6", "Staff 9"])
        XCTAssertEqual(last.leftOut, 0)
        let beyond = RosterPage(limit: 4, offset: 50).select(people)
        XCTAssertEqual(beyond.people, [])
        XCTAssertEqual(beyond.leftOut, 0)
        XCTAssertEqual(beyond.roster, 10)
    }
}
