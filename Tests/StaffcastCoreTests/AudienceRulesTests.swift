import Foundation
@testable import StaffcastCore
import XCTest

/// Pure parts of audiences: team names, check-in links, reach per zone.
final class AudienceRulesTests: XCTestCase {
    func testTeamNames() throws {
        XCTAssertNoThrow(try Team.validateName("Gate 3"))
        XCTAssertNoThrow(try Team.validateName("Güvenlik"))
        for bad in ["", " x", "x ", "a/b", "a,b", "a\nb", String(repeating: "x", count: 101), "a\u{7}b"] {
            XCTAssertThrowsError(try Team.validateName(bad), bad)
        }
    }

    func testCheckinLinksRoundTrip() throws {
        let event = UUID()
        let url = CheckinURL.make(base: "http://10.0.0.5:8080/", event: event, zone: "Gate 3/Ø")
        XCTAssertEqual(url, "http://10.0.0.5:8080/checkin/\(event.uuidString.lowercased())/Gate%203%2F%C3%98")
        let parsed = try XCTUnwrap(CheckinURL.parse(url))
        XCTAssertEqual(parsed.base, "http://10.0.0.5:8080")
        XCTAssertEqual(parsed.event, event)
        XCTAssertEqual(parsed.zone, "Gate 3/Ø")
        XCTAssertNil(CheckinURL.parse("http://h/join/abc"))
        XCTAssertNil(CheckinURL.parse("ftp://h/checkin/\(event.uuidString)/x"))
        XCTAssertNil(CheckinURL.parse("http://h/checkin/not-a-uuid/x"))
        XCTAssertNil(CheckinURL.parse("http://h/checkin/\(event.uuidString)/"))
    }

    func testReachCountsConnectedPerZone() {
        let (a, b, c) = (UUID(), UUID(), UUID())
        let reach = Reach.compute(eventID: UUID(), roster: [(a, "A"), (b, "B"), (c, "C")], connected: [a, c], lastSeen: [:],
                                  zones: [(name: "Gate 2", members: [b]), (name: "Gate 1", members: [a, b])])
        XCTAssertEqual(reach.zones, [Reach.Zone(name: "Gate 1", members: 2, connected: 1), Reach.Zone(name: "Gate 2", members: 1, connected: 0)])
        let json = String(decoding: try! JSONEncoder().encode(reach), as: UTF8.self)
        XCTAssertTrue(json.contains("\"zones\":[{"), json)
    }
}
