import Foundation
import StaffcastCore
import StaffcastPostgres
import XCTest

/// Corrections in the outbox (sql/021_corrections.sql), without a server: an edit or retract
/// queues a push for each subscription the message was pushed to (or is being pushed to), sent
/// after the original and only where the original was delivered and this change not yet shown.
final class CorrectionOutboxTests: IntegrationTestCase {
    let key = Base64URL.encode([4] + [UInt8](repeating: 7, count: 64))
    let auth = Base64URL.encode([UInt8](repeating: 1, count: 16))

    func subscribe(_ user: UUID, _ name: String) throws -> UUID {
        try fixture.store.addPushSubscription(as: user, token: nil, try PushSubscriptionRequest(
            endpoint: "https://push.example/\(name)", p256dh: key, auth: auth))
    }

    /// (subscription, correction, text) of each push claimed.
    func claim(_ node: String = "a") throws -> [(UUID, Correction?, String)] {
        try fixture.store.claimDeliveries(node: node, limit: 50).compactMap { item in
            guard case .push(let subscription, _, _, _, _, let message, let correction) = item.target else { return nil }
            return (subscription, correction, message.message)
        }
    }

    func deliver(_ node: String = "a") throws {
        for item in try fixture.store.claimDeliveries(node: node, limit: 50) {
            try fixture.store.recordAttempt(item, .delivered, statusCode: 201, node: node)
        }
    }

    func testACorrectionGoesOnlyWhereTheOriginalWasDeliveredAndAfterIt() throws {
        let store = fixture.store
        let sam = try subscribe(fixture.staff, "sam")
        let ada = try subscribe(fixture.admin, "ada")
        let m = try store.send(as: fixture.owner, SendRequest(eventID: fixture.event, message: "Evacuate hall B"))
        XCTAssertEqual(try store.expandFanouts(emailAfterSeconds: nil), 1)
        // Sam's push is delivered; Ada's is in flight (claimed with the old text) when the edit comes.
        let first = try store.claimDeliveries(node: "a", limit: 50)
        XCTAssertEqual(first.count, 2)
        for item in first {
            guard case .push(let subscription, _, _, _, _, _, _) = item.target, subscription == sam else { continue }
            try store.recordAttempt(item, .delivered, statusCode: 201, node: "a")
        }
        let late = try subscribe(fixture.staff, "sam-tablet") // never got the original
        _ = try store.editMessage(as: fixture.owner, messageID: m.id, text: "Evacuate hall C")

        let corrected = try claim()
        XCTAssertEqual(corrected.map(\.0), [sam], "Ada's correction waits behind her push in flight; the tablet gets none")
        XCTAssertEqual(corrected.first?.1, .updated)
        XCTAssertEqual(corrected.first?.2, "Evacuate hall C")
        for item in first where item.userID == fixture.admin {
            try store.recordAttempt(item, .delivered, statusCode: 201, node: "a")
        }
        let after = try claim()
        XCTAssertEqual(after.map(\.0), [ada], "once her original is delivered, the correction follows it")
        XCTAssertEqual(after.first?.1, .updated)
        XCTAssertEqual(try fixture.count("SELECT count(*) FROM outbox WHERE subscription_id = $1", [late.uuidString]), 0)
    }

    func testAQueuedOriginalCarriesTheNewTextAndNeedsNoCorrection() throws {
        let store = fixture.store
        let sam = try subscribe(fixture.staff, "sam")
        let m = try store.send(as: fixture.owner, SendRequest(eventID: fixture.event, message: "Evacuate hall B"))
        XCTAssertEqual(try store.expandFanouts(emailAfterSeconds: nil), 1)
        _ = try store.editMessage(as: fixture.owner, messageID: m.id, text: "Evacuate hall C")
        let first = try claim()
        XCTAssertEqual(first.map(\.0), [sam])
        XCTAssertEqual(first.first?.1, nil, "the original, not yet sent, is sent with the corrected text")
        XCTAssertEqual(first.first?.2, "Evacuate hall C")
        for item in try store.claimDeliveries(node: "b", limit: 50) { XCTFail("nothing else is due yet: \(item)") }
        try fixture.store.conn.query("UPDATE outbox SET status = 'done', lease_until = NULL WHERE kind = 'push' AND correction_seq IS NULL")
        XCTAssertEqual(try claim().count, 0, "the phone already shows the corrected text")
        XCTAssertEqual(try fixture.count("SELECT count(*) FROM outbox WHERE kind = 'push' AND correction_seq IS NOT NULL AND status = 'skipped'"), 1)
    }

    func testARetractFollowsADeliveredPushAndDropsAQueuedOne() throws {
        let store = fixture.store
        let sam = try subscribe(fixture.staff, "sam")
        let m = try store.send(as: fixture.owner, SendRequest(eventID: fixture.event, message: "Gates open at 10"))
        XCTAssertEqual(try store.expandFanouts(emailAfterSeconds: nil), 1)
        try deliver()
        _ = try subscribe(fixture.admin, "ada")
        let queued = try store.send(as: fixture.owner, SendRequest(eventID: fixture.event, message: "Gates open at 11"))
        XCTAssertEqual(try store.expandFanouts(emailAfterSeconds: nil), 1)
        _ = try store.editMessage(as: fixture.owner, messageID: m.id, text: "Gates open at 10:30")
        _ = try store.retractMessage(as: fixture.owner, messageID: m.id)
        _ = try store.retractMessage(as: fixture.owner, messageID: queued.id)
        let claimed = try claim()
        // The edit's correction is still queued: it is claimed with the message as it is now
        // (retracted), so it is dropped; the retract's notice goes once the edit's row is done.
        XCTAssertEqual(claimed.map(\.1), [], "\(claimed)")
        let withdrawn = try claim()
        XCTAssertEqual(withdrawn.map(\.0), [sam])
        XCTAssertEqual(withdrawn.map(\.1), [.retracted])
        XCTAssertEqual(withdrawn.map(\.2), ["Gates open at 10"], "the notice names what the phone showed, not the edit it never got")
        XCTAssertEqual(try fixture.count("""
            SELECT count(*) FROM outbox WHERE message_id = $1 AND status = 'skipped' AND correction_seq IS NULL
            """, [queued.id.uuidString]), 2, "the second message's queued pushes are dropped; it was pushed nowhere, so no notice")
        XCTAssertEqual(try claim().count, 0)
    }
}
