import Foundation
import StaffcastCore
import StaffcastPostgres
import Synchronization
import XCTest

/// The outbox's claims in PostgreSQL (sql/012_reach.sql), without a server: urgent first,
/// leases that keep a second claimer off, leases given back, and webhooks one at a time in order.
final class OutboxStoreTests: IntegrationTestCase {
    let key = Base64URL.encode([4] + [UInt8](repeating: 7, count: 64))
    let auth = Base64URL.encode([UInt8](repeating: 1, count: 16))

    /// A killed server's presence rows stop counting after `presenceFreshSeconds` (10 s; they
    /// counted for 30 s, so its people were "delivered live" and got no push meanwhile).
    func testAKilledServersPresenceStopsCountingAfterTenSeconds() throws {
        let row = Store.PresenceRow(node: "killed", connectionID: 1, userID: fixture.staff, eventID: fixture.event,
                                    connectedSince: Date(), rttMs: nil)
        try fixture.store.replacePresence(node: "killed", rows: [row])
        XCTAssertEqual(try fixture.store.presence(event: fixture.event, excludingNode: "here").count, 1)
        try fixture.store.conn.execute("UPDATE presence SET seen_at = now() - interval '8 seconds' WHERE node = 'killed'")
        XCTAssertEqual(try fixture.store.presence(event: fixture.event, excludingNode: "here").count, 1, "two refreshes missed: still there")
        try fixture.store.conn.execute("UPDATE presence SET seen_at = now() - interval '11 seconds' WHERE node = 'killed'")
        XCTAssertEqual(try fixture.store.presence(event: fixture.event, excludingNode: "here").count, 0, "a server gone for 11 s")
        XCTAssertEqual(Store.presenceFreshSeconds, 10)
    }

    /// A live server renews its leases; one that died lets go within a lease (60 s; it was 300 s
    /// without renewal, and a killed server held a webhook's feed for five minutes).
    func testALiveServerRenewsItsLeasesAndNoOtherServers() throws {
        _ = try fixture.store.addPushSubscription(as: fixture.staff, token: nil, try PushSubscriptionRequest(
            endpoint: "https://push.example/sam", p256dh: key, auth: auth))
        _ = try fixture.store.send(as: fixture.owner, SendRequest(eventID: fixture.event, message: "Lease me", messageType: "alert",
                                                                  priority: "urgent"))
        _ = try fixture.store.expandFanouts(emailAfterSeconds: nil)
        let claimed = try fixture.store.claimDeliveries(node: "alive", limit: 10, leaseSeconds: 60)
        XCTAssertFalse(claimed.isEmpty)
        try fixture.store.conn.execute("UPDATE outbox SET lease_until = now() + interval '5 seconds' WHERE leased_by = 'alive'")
        XCTAssertEqual(try fixture.store.renewLeases(node: "dead", leaseSeconds: 60), [])
        XCTAssertEqual(Set(try fixture.store.renewLeases(node: "alive", leaseSeconds: 60)), Set(claimed.map(\.id)))
        XCTAssertEqual(try fixture.count("SELECT count(*) FROM outbox WHERE leased_by = 'alive' AND lease_until > now() + interval '50 seconds'"),
                       claimed.count)
        // A lease that ran out is not taken back by a renewal: another server may hold the row by now.
        try fixture.store.conn.execute("UPDATE outbox SET lease_until = now() - interval '1 second' WHERE leased_by = 'alive'")
        XCTAssertEqual(try fixture.store.renewLeases(node: "alive", leaseSeconds: 60), [])
        XCTAssertEqual(try fixture.store.claimDeliveries(node: "other", limit: 10).count, claimed.count, "due again for another server")
    }

    func testUrgentGoesFirstAndALeaseKeepsOthersOff() throws {
        let store = fixture.store
        _ = try store.addPushSubscription(as: fixture.staff, token: nil, try PushSubscriptionRequest(
            endpoint: "https://push.example/sam", p256dh: key, auth: auth))
        let normal = try store.send(as: fixture.owner, SendRequest(eventID: fixture.event, message: "Lunch"))
        let urgent = try store.send(as: fixture.owner, SendRequest(eventID: fixture.event, message: "Storm", messageType: "alert",
                                                                   priority: "urgent"))
        XCTAssertEqual(try store.expandFanouts(emailAfterSeconds: nil), 2)
        let first = try store.claimDeliveries(node: "a", limit: 1)
        XCTAssertEqual(first.map(\.messageID), [urgent.id], "the urgent push is claimed before the older normal one")
        XCTAssertEqual(first.first?.attempts, 1)
        let second = try store.claimDeliveries(node: "b", limit: 10)
        XCTAssertEqual(second.map(\.messageID), [normal.id], "a leased row is not claimed again")
        XCTAssertEqual(try store.claimDeliveries(node: "c", limit: 10).count, 0)
        try store.releaseLeases(first.map(\.id), node: "a")
        let again = try store.claimDeliveries(node: "c", limit: 10)
        XCTAssertEqual(again.map(\.messageID), [urgent.id], "a lease given back makes the row due at once")
        XCTAssertEqual(again.first?.attempts, 1, "giving a lease back does not count as an attempt")
    }

    func testAWebhooksDeliveriesAreClaimedOneAtATimeInOrder() throws {
        let store = fixture.store
        _ = try store.createWebhook(as: fixture.owner, try WebhookRequest(eventID: fixture.event, url: "https://hooks.example/a",
                                                                          events: ["message"], secret: "0123456789abcdef"))
        let messages = try (1...3).map { try store.send(as: fixture.owner, SendRequest(eventID: fixture.event, message: "Update \($0)")) }
        func claimed() throws -> [UUID] {
            try store.claimDeliveries(node: "a", limit: 10).compactMap { item in
                guard case .webhook(_, _, _, _, let payload) = item.target,
                      let object = try? JSONSerialization.jsonObject(with: Data(payload.utf8)) as? [String: Any],
                      let data = object["data"] as? [String: Any] else { return nil }
                try store.recordAttempt(item, .delivered, statusCode: 204, node: "a")
                return (data["id"] as? String).flatMap(UUID.init(uuidString:))
            }
        }
        XCTAssertEqual(try claimed(), [messages[0].id], "only the head of the webhook's queue")
        XCTAssertEqual(try claimed(), [messages[1].id])
        XCTAssertEqual(try claimed(), [messages[2].id])
        XCTAssertEqual(try claimed(), [])
    }

    /// An outcome recorded late (kept while the database was down) does not touch a row that
    /// another server claimed after the lease ran out; that server's own outcome counts.
    func testALateOutcomeDoesNotOverwriteAnotherServersLease() throws {
        let store = fixture.store
        _ = try store.createWebhook(as: fixture.owner, try WebhookRequest(eventID: fixture.event, url: "https://hooks.example/a",
                                                                          events: ["message"], secret: "0123456789abcdef"))
        _ = try store.send(as: fixture.owner, SendRequest(eventID: fixture.event, message: "Doors at six"))
        let first = try XCTUnwrap(try store.claimDeliveries(node: "a", limit: 10).first)
        XCTAssertEqual(try fixture.count("UPDATE outbox SET lease_until = now() - interval '1 second' WHERE id = $1 RETURNING 1", [String(first.id)]), 1)
        let second = try XCTUnwrap(try store.claimDeliveries(node: "b", limit: 10).first)
        XCTAssertEqual(second.id, first.id)
        XCTAssertFalse(try store.recordAttempt(first, .failed(error: "late"), statusCode: nil, node: "a"), "a's lease is gone")
        XCTAssertEqual(try fixture.count("SELECT count(*) FROM outbox WHERE id = $1 AND status = 'pending' AND leased_by = 'b'", [String(first.id)]), 1)
        XCTAssertTrue(try store.recordAttempt(second, .delivered, statusCode: 204, node: "b"))
        XCTAssertEqual(try fixture.count("SELECT count(*) FROM outbox WHERE id = $1 AND status = 'done'", [String(first.id)]), 1)
    }

    /// Revoking a token deletes its subscriptions in id order (sql/021), the order in which a
    /// fanout pass's foreign-key checks lock a person's subscriptions as it queues their pushes.
    /// Before, the revoke took them in the order of the table (here: the higher id first), and a
    /// fanout holding the lower one while it went on to the higher one deadlocked with it:
    /// PostgreSQL aborted the revoke (HTTP 500 to the owner) after `deadlock_timeout`.
    func testARevokeAndAFanoutLockAPersonsSubscriptionsInTheSameOrder() throws {
        try revokeWhileAFanoutHoldsTheLowerSubscription(lowerNamesTheToken: true)
    }

    /// The same with a subscription from before sql/019 (no token) at the lower id: the revoke
    /// deletes it too (no valid token left), and must lock it in the same order (sql/022).
    func testARevokeLocksATokenlessSubscriptionInTheSameOrderToo() throws {
        try revokeWhileAFanoutHoldsTheLowerSubscription(lowerNamesTheToken: false)
    }

    private func revokeWhileAFanoutHoldsTheLowerSubscription(lowerNamesTheToken: Bool) throws {
        let sam = fixture.staff
        if !lowerNamesTheToken {
            // The phone's token is Sam's only valid one, so its end ends the tokenless one too.
            try fixture.store.conn.execute("UPDATE api_tokens SET revoked_at = now() WHERE user_id = '\(sam.uuidString)'")
        }
        let phone = try fixture.store.issueToken(user: sam, label: "phone")
        let low = UUID(uuidString: "00000000-0000-4000-8000-000000000001")!, high = UUID(uuidString: "ffffffff-ffff-4fff-bfff-ffffffffffff")!
        for (id, device) in [(high, "a"), (low, "b")] { // the higher id first in the table
            let token = id == low && !lowerNamesTheToken ? "NULL::bytea" : "token_hash"
            try fixture.store.conn.query("""
                INSERT INTO push_subscriptions (id, user_id, endpoint, p256dh, auth, token_hash)
                SELECT $1, $2, $3, $4, $5, \(token) FROM api_tokens WHERE user_id = $2 AND label = 'phone'
                """, [id.uuidString, sam.uuidString, "https://push.example/\(device)", key, auth])
        }
        // A fanout pass has queued Sam's push to the lower subscription (its foreign-key check
        // holds it) and is about to queue the one to the higher.
        let fanout = try PGConnection(conninfo: fixture.conninfo)
        try fanout.execute("BEGIN")
        try fanout.query("INSERT INTO outbox (kind, user_id, subscription_id) VALUES ('push', $1, $2)", [sam.uuidString, low.uuidString])
        let failure = Mutex<String?>(nil)
        let revoked = DispatchSemaphore(value: 0)
        let conninfo = fixture.conninfo
        Thread {
            do { _ = try Store(PGConnection(conninfo: conninfo)).revokeToken(phone) } catch { failure.withLock { $0 = "\(error)" } }
            revoked.signal()
        }.start()
        XCTAssertTrue(try waitUntil(10) {
            try fixture.count("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'") >= 1
        }, "the revoke waits for the fanout")
        try fanout.query("INSERT INTO outbox (kind, user_id, subscription_id) VALUES ('push', $1, $2)", [sam.uuidString, high.uuidString])
        try fanout.execute("COMMIT")
        XCTAssertEqual(revoked.wait(timeout: .now() + 10), .success, "the revoke did not finish")
        XCTAssertNil(failure.withLock { $0 }, "the revoke failed")
        XCTAssertEqual(try fixture.store.pushSubscriptionIDs(user: sam), [])
        XCTAssertEqual(try fixture.count("SELECT count(*) FROM outbox WHERE user_id = $1", [sam.uuidString]), 0, "their pushes went with them")
    }
}
