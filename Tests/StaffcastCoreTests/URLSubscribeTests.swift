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

    func testTheURLAClientBuildsParsesBackToTheSameSubscribe() throws {
        for asked in [URLSubscribe(eventID: event, sinceSeq: 42, ref: "c7"), URLSubscribe(eventID: event),
                      URLSubscribe(eventID: event, sinceSeq: 0, ref: "a b+c&d=e")] {
            let url = asked.url("ws://127.0.0.1:8080/v1/ws")
            let components = try XCTUnwrap(URLComponents(string: url))
            XCTAssertEqual(components.path, "/v1/ws")
            var query: [String: String] = [:]
            for item in components.queryItems ?? [] { query[item.name] = item.value }
            XCTAssertEqual(try URLSubscribe.parse(query).get(), asked, url)
        }
        // What the URL asks already stays; the subscribe follows it.
        let url = URLSubscribe(eventID: event, sinceSeq: 3, ref: "r").url("wss://example.org/v1/ws?x=1")
        XCTAssertEqual(url, "wss://example.org/v1/ws?x=1&subscribe=\(event.uuidString.lowercased())&since_seq=3&ref=r")
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
