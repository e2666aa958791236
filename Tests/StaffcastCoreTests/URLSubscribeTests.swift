import Foundation
import StaffcastCore
import XCTest

/// `URLSubscribe.parse`: what the upgrade's query asks, or a sentence naming what is wrong.
final class URLSubscribeTests: XCTestCase {
    let event = UUID()

    func testNoSubscribeParameterAsksForNothing() throws {
        XCTAssertNil(try URLSubscribe.parse([:]).get())
        XCTAssertNil(try URLSubscribe.parse(["access_token": "sc_x"]).get())
    }

    func testAnEventWithItsCursorAndRefIsTheSubscribeFrame() throws {
        let asked = try XCTUnwrap(try URLSubscribe.parse(["subscribe": event.uuidString.lowercased(), "since_seq": "42", "ref": "r1"]).get())
        XCTAssertEqual(asked, URLSubscribe(eventID: event, sinceSeq: 42, ref: "r1"))
        XCTAssertEqual(asked.frame, ClientFrame(ref: "r1", request: .subscribe(eventID: event, sinceSeq: 42)))
        let bare = try XCTUnwrap(try URLSubscribe.parse(["subscribe": event.uuidString]).get())
        XCTAssertEqual(bare.frame, ClientFrame(ref: nil, request: .subscribe(eventID: event, sinceSeq: nil)))
    }

    func testWhatIsWrongIsNamed() {
        for (query, words) in [
            (["subscribe": "hall-b"], "not an event id"),
            (["subscribe": ""], "not an event id"),
            (["subscribe": event.uuidString, "since_seq": "-1"], "since_seq must be a whole number"),
            (["subscribe": event.uuidString, "since_seq": "ten"], "since_seq must be a whole number"),
            (["since_seq": "3"], "goes with subscribe="),
        ] {
            guard case .failure(let error) = URLSubscribe.parse(query) else { XCTFail("\(query) was taken"); continue }
            XCTAssertEqual(error.code, .invalid)
            XCTAssertTrue(error.message.contains(words), "\(query): \(error.message)")
        }
    }
}
