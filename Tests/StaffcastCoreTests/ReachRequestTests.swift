import Foundation
import StaffcastCore
import XCTest

/// Push subscriptions and webhooks as the API takes them: what is refused, with what sentence.
final class ReachRequestTests: XCTestCase {
    let key = Base64URL.encode([4] + [UInt8](repeating: 7, count: 64))
    let auth = Base64URL.encode([UInt8](repeating: 1, count: 16))

    func testBase64URLRoundTripsAndRefusesOtherAlphabets() {
        let bytes: [UInt8] = [0xfb, 0xff, 0xfe, 0x00, 0x10]
        let text = Base64URL.encode(bytes)
        XCTAssertFalse(text.contains("+") || text.contains("/") || text.contains("="))
        XCTAssertEqual(Base64URL.decode(text), bytes)
        XCTAssertEqual(Base64URL.decode(text + "="), bytes)
        XCTAssertNil(Base64URL.decode("a b"))
        XCTAssertNil(Base64URL.decode("ab=c"))
    }

    func testASubscriptionNeedsAnHTTPSEndpointAndRFC8291Keys() throws {
        let body = #"{"endpoint":"https://push.example/abc","expirationTime":null,"keys":{"p256dh":"\#(key)","auth":"\#(auth)"}}"#
        let s = try PushSubscriptionRequest.decode(body: Array(body.utf8))
        XCTAssertEqual(s.endpoint, "https://push.example/abc")
        func refused(_ json: String) -> String? {
            do { _ = try PushSubscriptionRequest.decode(body: Array(json.utf8)); return nil } catch { return error.message }
        }
        XCTAssertNotNil(refused(#"{"endpoint":"http://push.example/abc","keys":{"p256dh":"\#(key)","auth":"\#(auth)"}}"#))
        XCTAssertNotNil(refused(#"{"endpoint":"https://push.example/abc","keys":{"p256dh":"\#(auth)","auth":"\#(auth)"}}"#))
        XCTAssertNotNil(refused(#"{"endpoint":"https://push.example/abc","keys":{"p256dh":"\#(key)","auth":"\#(key)"}}"#))
        XCTAssertNotNil(refused(#"{"endpoint":"https://push.example/abc"}"#))
        XCTAssertNotNil(refused("not json"))
        // Found by an attack: a line break in the endpoint (retried for a day) and port 0.
        for endpoint in ["https://push.example/a\r\nX-Evil: 1", "https://push.example/a\nb", "https://push.example/a\tb",
                         "https://localhost:0/x"] {
            XCTAssertThrowsError(try PushSubscriptionRequest(endpoint: endpoint, p256dh: key, auth: auth), endpoint)
        }
    }

    func testAWebhookURLIsOneLine() {
        for url in ["https://hooks.example/x\r\nX-Evil: 1", "https://hooks.example/x\n", "http://hooks.example:0/x"] {
            XCTAssertThrowsError(try WebhookRequest(eventID: UUID(), url: url, events: ["message"], secret: "0123456789abcdef"), url)
        }
    }

    func testAWebhookNamesKnownChangesAndALongEnoughSecret() throws {
        let event = UUID()
        let w = try WebhookRequest.decode(eventID: event, body: Array(
            #"{"url":"https://hooks.example/x","events":["reply","message","reply"],"secret":"0123456789abcdef"}"#.utf8))
        XCTAssertEqual(w.events, ["message", "reply"])
        XCTAssertThrowsError(try WebhookRequest(eventID: event, url: "ftp://x/y", events: ["message"], secret: "0123456789abcdef"))
        XCTAssertThrowsError(try WebhookRequest(eventID: event, url: "https://x/y", events: ["sms"], secret: "0123456789abcdef"))
        XCTAssertThrowsError(try WebhookRequest(eventID: event, url: "https://x/y", events: [], secret: "0123456789abcdef"))
        XCTAssertThrowsError(try WebhookRequest(eventID: event, url: "https://x/y", events: ["message"], secret: "short"))
    }
}

/// Email addresses on profiles: one plain address, nothing that could break SMTP or a header.
final class EmailAddressTests: XCTestCase {
    func testPlainAddressesPassAndOthersAreRefused() throws {
        XCTAssertEqual(try EmailAddress.validate(" sam@example.org "), "sam@example.org")
        XCTAssertNil(try EmailAddress.validate(""))
        for bad in ["sam", "sam@", "@example.org", "sam@example", "a@b@c.org", "Sam <sam@example.org>",
                    "sam@example.org\r\nBcc: x@y.org", "sam@.org", "sa m@example.org"] {
            XCTAssertThrowsError(try EmailAddress.validate(bad), bad)
        }
    }
}
