import Foundation
#if canImport(Glibc)
import Glibc
#endif
import StaffcastClient
import StaffcastCore
import StaffcastPostgres
@testable import StaffcastServer
import XCTest

/// Web Push end to end against a real counterpart: an HTTPS push service on loopback
/// (`scripts/test-counterparts.py push`) that decrypts each body with PyPI http-ece (RFC 8291)
/// and verifies the VAPID JWT (RFC 8292) with `cryptography`. Real PostgreSQL, real server.
final class PushTests: IntegrationTestCase {
    var service: Counterpart!
    var keyFile: String!

    override func setUpWithError() throws {
        try super.setUpWithError()
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("staffcast-push-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        keyFile = dir.appendingPathComponent("data/push_vapid_key.pem").path
        service = try Counterpart(["push", "--ca", dir.appendingPathComponent("push-ca.pem").path])
        let ca = service.info["ca"] as? String
        try startServer {
            $0.reach.pushVapidKey = self.keyFile
            $0.reach.pushContact = "mailto:ops@example.org"
            $0.reach.caFile = ca
            // The push service of these tests is on 127.0.0.1.
            $0.reach.allowPrivateHosts = true
        }
    }

    override func tearDown() {
        service?.stop()
        service = nil
        super.tearDown()
    }

    func id(_ u: UUID) -> String { u.uuidString.lowercased() }

    /// The counterpart's subscription `name`; `device` makes another endpoint with its keys.
    func subscription(_ name: String, device: String = "") -> [String: Any] {
        let all = service.info["subscriptions"] as? [String: [String: String]] ?? [:]
        let s = all[name] ?? [:]
        return ["endpoint": (s["endpoint"] ?? "") + device, "keys": ["p256dh": s["p256dh"] ?? "", "auth": s["auth"] ?? ""]]
    }

    func subscribe(_ token: String, _ name: String, device: String = "") throws -> UUID {
        let body = try JSONSerialization.data(withJSONObject: subscription(name, device: device))
        let r = try server.api(token).raw("POST", "/v1/push/subscriptions", body: body, contentType: "application/json")
        XCTAssertEqual(r.status, 201, String(decoding: r.body, as: UTF8.self))
        let object = try JSONSerialization.jsonObject(with: r.body) as? [String: Any]
        return try XCTUnwrap((object?["id"] as? String).flatMap(UUID.init(uuidString:)))
    }

    func pushed(_ request: [String: Any]) -> [String: Any]? {
        guard let text = request["plaintext"] as? String else { return nil }
        return try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
    }

    func pushedMessageID(_ request: [String: Any]) -> String? {
        (pushed(request)?["message"] as? [String: Any])?["id"] as? String
    }

    func path(_ request: [String: Any], _ prefix: String) -> Bool { (request["path"] as? String)?.hasPrefix(prefix) == true }

    func testTheKeyIsMadeOnceAndServed() throws {
        XCTAssertTrue(FileManager.default.fileExists(atPath: keyFile), "push_vapid_key is made on first start")
        let attributes = try FileManager.default.attributesOfItem(atPath: keyFile)
        XCTAssertEqual((attributes[.posixPermissions] as? NSNumber)?.intValue, 0o600)
        let r = try server.api(nil).raw("GET", "/v1/push/key")
        XCTAssertEqual(r.status, 200)
        let key = try XCTUnwrap((try JSONSerialization.jsonObject(with: r.body) as? [String: Any])?["public_key"] as? String)
        let bytes = try XCTUnwrap(Base64URL.decode(key))
        XCTAssertEqual(bytes.count, 65)
        XCTAssertEqual(bytes.first, 4, "uncompressed P-256")
        // A restart keeps the key (browsers' subscriptions are bound to it).
        server.stop()
        server = try TestServer(conninfo: fixture.conninfo) { $0.reach.pushVapidKey = self.keyFile }
        let again = try server.api(nil).raw("GET", "/v1/push/key")
        XCTAssertEqual((try JSONSerialization.jsonObject(with: again.body) as? [String: Any])?["public_key"] as? String, key)
    }

    func testBadSubscriptionsAreRefusedAndOnlyTheOwnerDeletes() throws {
        let bad = try server.api(fixture.staffToken).raw("POST", "/v1/push/subscriptions",
                                                          body: Data(#"{"endpoint":"http://x/y","keys":{"p256dh":"a","auth":"b"}}"#.utf8),
                                                          contentType: "application/json")
        XCTAssertEqual(bad.status, 400)
        // Found by an attack: each was stored (201) and then failed or was retried for a day.
        let keys = subscription("ok")["keys"] as? [String: String] ?? [:]
        let zeros = Base64URL.encode([4] + [UInt8](repeating: 0, count: 64)) // not a point on P-256
        let refused: [(String, [String: String], String)] = [
            (try XCTUnwrap(subscription("ok")["endpoint"] as? String) + "\r\nX-Evil: 1", keys, "control characters"),
            ("https://localhost:0/x", keys, "port 0"),
            (try XCTUnwrap(subscription("ok")["endpoint"] as? String), ["p256dh": zeros, "auth": keys["auth"] ?? ""], "P-256"),
        ]
        for (endpoint, keys, why) in refused {
            let body = try JSONSerialization.data(withJSONObject: ["endpoint": endpoint, "keys": keys])
            let r = try server.api(fixture.staffToken).raw("POST", "/v1/push/subscriptions", body: body, contentType: "application/json")
            XCTAssertEqual(r.status, 400, why)
            XCTAssertTrue(String(decoding: r.body, as: UTF8.self).contains(why), String(decoding: r.body, as: UTF8.self))
        }
        XCTAssertEqual(try fixture.store.pushSubscriptionIDs(user: fixture.staff), [])
        XCTAssertEqual(try server.api(nil).raw("POST", "/v1/push/subscriptions", body: Data("{}".utf8)).status, 401)
        let mine = try subscribe(fixture.staffToken, "ok")
        XCTAssertEqual(try subscribe(fixture.staffToken, "ok"), mine, "the same endpoint again is the same subscription")
        XCTAssertEqual(try server.api(fixture.adminToken).raw("DELETE", "/v1/push/subscriptions/\(id(mine))").status, 404)
        XCTAssertEqual(try server.api(fixture.staffToken).raw("DELETE", "/v1/push/subscriptions/\(id(mine))").status, 200)
        XCTAssertEqual(try fixture.store.pushSubscriptionIDs(user: fixture.staff), [])
    }

    func testEndpointsOnLoopbackOrPrivateHostsAreRefusedByDefault() throws {
        let strict = try startServer { $0.reach.pushVapidKey = self.keyFile }
        let keys = subscription("ok")["keys"] ?? [:]
        var hosts = ["127.0.0.1:\(service.port)", "127.0.1.9:18491", "[::1]", "localhost", "2130706433", "10.1.2.3", "169.254.169.254"]
        // This machine's name, when /etc/hosts says it is loopback: refused once resolved.
        let name = ProcessInfo.processInfo.hostName
        if PushHostCheck.addresses(of: name).contains(where: { $0.first == 127 }), DeliveryHostRule.refusal(host: name) == nil {
            hosts.append(name)
        }
        for host in hosts {
            let body = try JSONSerialization.data(withJSONObject: ["endpoint": "https://\(host)/p", "keys": keys])
            let r = try strict.api(fixture.staffToken).raw("POST", "/v1/push/subscriptions", body: body, contentType: "application/json")
            XCTAssertEqual(r.status, 400, host)
            XCTAssertTrue(String(decoding: r.body, as: UTF8.self).contains("endpoint refused"), host)
        }
        XCTAssertEqual(try fixture.store.pushSubscriptionIDs(user: fixture.staff), [])
    }

    func testOnePersonKeepsAtMostTenSubscriptionsTheOldestAreReplaced() throws {
        let ok = subscription("ok")
        let endpoint = try XCTUnwrap(ok["endpoint"] as? String)
        var ids: [UUID] = []
        for i in 0..<12 {
            let body = try JSONSerialization.data(withJSONObject: ["endpoint": "\(endpoint)-device\(i)", "keys": ok["keys"] ?? [:]])
            let r = try server.api(fixture.staffToken).raw("POST", "/v1/push/subscriptions", body: body, contentType: "application/json")
            XCTAssertEqual(r.status, 201, String(decoding: r.body, as: UTF8.self))
            ids.append(try XCTUnwrap(((try JSONSerialization.jsonObject(with: r.body) as? [String: Any])?["id"] as? String).flatMap(UUID.init(uuidString:))))
        }
        XCTAssertEqual(Set(try fixture.store.pushSubscriptionIDs(user: fixture.staff)), Set(ids.suffix(10)),
                       "the two oldest were replaced; the newest (a reinstalled phone) is kept")
        XCTAssertEqual(try fixture.store.pushSubscriptionIDs(user: fixture.admin), [], "another person's are their own")
    }

    /// One person's subscriptions to a host that accepts and never answers hold at most four
    /// delivery threads (each for the 20 s attempt timeout); everyone else's pushes go at once.
    func testEndpointsThatNeverAnswerDoNotHoldUpOtherPeoplesPushes() throws {
        let tarpit = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(tarpit) }
        var address = sockaddr_in(sin_family: sa_family_t(AF_INET), sin_port: 0,
                                  sin_addr: in_addr(s_addr: inet_addr("127.0.0.1")), sin_zero: (0, 0, 0, 0, 0, 0, 0, 0))
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        // Never accepted: the kernel completes each connection, and no TLS answer ever comes.
        let listening = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(tarpit, $0, length) == 0 && listen(tarpit, 128) == 0 && getsockname(tarpit, $0, &length) == 0
            }
        }
        XCTAssertTrue(listening)
        let port = UInt16(bigEndian: address.sin_port)
        // One server, so its six delivery threads are the only ones.
        server.stop()
        let ca = service.info["ca"] as? String
        server = try TestServer(conninfo: fixture.conninfo) {
            $0.reach.pushVapidKey = self.keyFile
            $0.reach.caFile = ca
            $0.reach.allowPrivateHosts = true
            $0.reach.threads = 6
        }
        let keys = subscription("ok")["keys"] ?? [:]
        for i in 0..<10 {
            let body = try JSONSerialization.data(withJSONObject: ["endpoint": "https://127.0.0.1:\(port)/p\(i)", "keys": keys])
            XCTAssertEqual(try server.api(fixture.adminToken).raw("POST", "/v1/push/subscriptions", body: body,
                                                                 contentType: "application/json").status, 201)
        }
        let api = try server.api(fixture.ownerToken)
        _ = try api.sendMessage(event: fixture.event, message: "Radio check", type: nil, priority: nil, expiresInMinutes: nil)
        // The outbox claims once a second: the admin's ten pushes are now in flight or waiting.
        Thread.sleep(forTimeInterval: 2.5)
        _ = try subscribe(fixture.staffToken, "ok")
        let sent = Date()
        let urgent = try api.sendMessage(event: fixture.event, message: "Evacuate stage B", type: "alert", priority: "urgent",
                                         expiresInMinutes: nil)
        XCTAssertFalse(service.wait(timeout: 8) { self.pushedMessageID($0) == self.id(urgent.id) }.isEmpty,
                       "Sam's push waited behind the admin's endpoints that never answer")
        XCTAssertLessThan(Date().timeIntervalSince(sent), 8)
    }

    func testAMessageIsPushedEncryptedWithVAPIDAndGoneAndFlakyServicesAreHandled() throws {
        let keyAnswer = try server.api(nil).raw("GET", "/v1/push/key")
        let publicKey = (try JSONSerialization.jsonObject(with: keyAnswer.body) as? [String: Any])?["public_key"] as? String
        _ = try subscribe(fixture.staffToken, "ok")
        _ = try subscribe(fixture.staffToken, "flaky")
        _ = try subscribe(fixture.adminToken, "gone")

        // Nobody is connected: a normal message goes to every subscription of the audience.
        let m = try server.api(fixture.ownerToken).sendMessage(event: fixture.event, message: "Gates open at 10",
                                                               type: nil, priority: nil, expiresInMinutes: 30)
        let ok = service.wait { self.path($0, "/ok/") }.first ?? [:]
        XCTAssertNil(ok["decrypt_error"], "\(ok)")
        let frame = try XCTUnwrap(pushed(ok), "the body decrypts (http-ece, aes128gcm) to JSON: \(ok)")
        XCTAssertEqual(frame["op"] as? String, "message")
        let message = try XCTUnwrap(frame["message"] as? [String: Any])
        XCTAssertEqual(message["id"] as? String, id(m.id))
        XCTAssertEqual(message["message"] as? String, "Gates open at 10")
        XCTAssertEqual(message["event_id"] as? String, id(fixture.event))
        XCTAssertEqual(message["sender_name"] as? String, "Olivia Owner")
        // VAPID: signature by the key GET /v1/push/key serves, aud the endpoint's origin, exp ≤ 24 h, sub the contact.
        XCTAssertEqual(ok["vapid_ok"] as? Bool, true, "\(ok["vapid_error"] ?? "")")
        XCTAssertEqual(ok["k"] as? String, publicKey)
        let claims = ok["claims"] as? [String: Any]
        XCTAssertEqual(claims?["sub"] as? String, "mailto:ops@example.org")
        XCTAssertEqual(claims?["aud"] as? String, "https://127.0.0.1:\(service.port)")
        let headers = ok["headers"] as? [String: String] ?? [:]
        XCTAssertEqual(headers["content-encoding"], "aes128gcm")
        XCTAssertEqual(headers["urgency"], "normal")
        XCTAssertEqual(headers["topic"], id(m.id).replacingOccurrences(of: "-", with: ""))
        let ttl = try XCTUnwrap(headers["ttl"].flatMap(Int.init))
        XCTAssertTrue((1_700...1_800).contains(ttl), "TTL runs to the expiry (30 min): \(ttl)")

        // 503 first, then delivered by a retry with backoff.
        let flaky = service.wait(for: 2) { self.path($0, "/flaky/") }
        XCTAssertEqual(flaky.map { $0["answered"] as? Int }, [503, 201])
        XCTAssertEqual(flaky.compactMap(pushedMessageID), [id(m.id), id(m.id)])

        // 410: the subscription is deleted.
        service.wait { self.path($0, "/gone/") }
        XCTAssertTrue(try waitUntil(10) { try fixture.store.pushSubscriptionIDs(user: fixture.admin).isEmpty },
                      "a 410 deletes the subscription")

        // Ops see it: retries and deliveries by kind.
        let metrics = String(decoding: try server.api(nil).raw("GET", "/metrics").body, as: UTF8.self)
        XCTAssertTrue(metrics.contains(#"staffcast_outbox_attempts_total{kind="push",outcome="retry"} 1"#), metrics)
        // The funnel: staff was reached by push (once, though two devices got it).
        XCTAssertTrue(try waitUntil(10) {
            try fixture.count("SELECT count(*) FROM message_reach WHERE message_id = $1 AND user_id = $2 AND via = 'push'",
                              [id(m.id), id(fixture.staff)]) == 1
        })
    }

    /// A subscription stored while its host was allowed, whose name now leads to this machine:
    /// a server that refuses private hosts refuses it when the connection opens, not only when
    /// a subscription is stored (a name can be pointed at the private network later).
    func testADeliveryToAPrivateAddressIsRefusedWhenTheConnectionOpens() throws {
        _ = try subscribe(fixture.staffToken, "ok") // stored by a server that allows private hosts
        server.stop()
        let ca = service.info["ca"] as? String
        server = try startServer {
            $0.reach.pushVapidKey = self.keyFile
            $0.reach.pushContact = "mailto:ops@example.org"
            $0.reach.caFile = ca
            $0.reach.allowPrivateHosts = false
        }
        _ = try server.api(fixture.ownerToken).sendMessage(event: fixture.event, message: "Gates open at 10",
                                                           type: nil, priority: nil, expiresInMinutes: 30)
        XCTAssertTrue(try waitUntil(20) {
            try fixture.count("SELECT count(*) FROM outbox WHERE kind = 'push' AND attempts >= 1 AND last_error IS NOT NULL") >= 1
        }, "the delivery was attempted and failed")
        XCTAssertTrue(service.requests.filter { path($0, "/ok/") }.isEmpty, "the push service on 127.0.0.1 was reached")
    }

    func testARetryIsDroppedOnceThePersonHasNoAccess() throws {
        let subscription = try subscribe(fixture.staffToken, "flaky")
        let m = try server.api(fixture.ownerToken).sendMessage(event: fixture.event, message: "Crew change at 14:00",
                                                               type: nil, priority: nil, expiresInMinutes: nil)
        // The first attempt gets 503; before its retry (a second or so later) Sam's access ends.
        service.wait { self.path($0, "/flaky/") }
        XCTAssertTrue(try fixture.store.revoke(event: fixture.event, user: fixture.staff))
        XCTAssertTrue(try waitUntil(15) {
            try fixture.count("SELECT count(*) FROM outbox WHERE kind = 'push' AND subscription_id = $1 AND status = 'skipped'",
                              [id(subscription)]) == 1
        }, "the retry finds Sam out of the audience and sends nothing")
        XCTAssertEqual(service.requests.filter { path($0, "/flaky/") }.count, 1)
        XCTAssertEqual(try fixture.count("SELECT count(*) FROM message_reach WHERE message_id = $1 AND via = 'push'", [id(m.id)]), 0)
    }

    func testConnectedStaffGetNoPushButUrgentGoesToEveryone() throws {
        _ = try subscribe(fixture.staffToken, "ok")
        let staff = try server.connect(fixture.staffToken)
        defer { staff.close() }
        _ = try staff.subscribe(fixture.event)
        // Presence is written every 3 s: wait until this server's row says Sam is here.
        XCTAssertTrue(try waitUntil(15) {
            try fixture.count("SELECT count(*) FROM presence WHERE user_id = $1 AND event_id = $2",
                              [id(fixture.staff), id(fixture.event)]) > 0
        })
        let api = try server.api(fixture.ownerToken)
        let normal = try api.sendMessage(event: fixture.event, message: "Lunch is served", type: nil, priority: nil, expiresInMinutes: nil)
        let urgent = try api.sendMessage(event: fixture.event, message: "Storm: all stages stop", type: "alert", priority: "urgent",
                                         expiresInMinutes: nil)
        let got = service.wait { self.pushedMessageID($0) == self.id(urgent.id) }.first ?? [:]
        XCTAssertEqual((got["headers"] as? [String: String])?["urgency"], "high")
        // Both were expanded (the fanout cursor is past them); the normal one made no push for Sam.
        XCTAssertTrue(try waitUntil(10) {
            try fixture.count("SELECT count(*) FROM staff_messages WHERE seq > (SELECT seq FROM fanout_cursor)") == 0
        })
        XCTAssertEqual(try fixture.count("SELECT count(*) FROM outbox WHERE kind = 'push' AND message_id = $1", [id(normal.id)]), 0)
        XCTAssertFalse(service.requests.contains { pushedMessageID($0) == id(normal.id) })
        // The funnel says how: live for both, push for the urgent one too.
        XCTAssertEqual(try fixture.count("SELECT count(*) FROM message_reach WHERE user_id = $1 AND via = 'live'", [id(fixture.staff)]), 2)
        XCTAssertTrue(try waitUntil(10) {
            try fixture.count("SELECT count(*) FROM message_reach WHERE message_id = $1 AND via = 'push'", [id(urgent.id)]) == 1
        })
        // Receipts carry the funnel: per person how and when, and the totals.
        let receipts = try server.api(fixture.adminToken).receipts(message: urgent.id).list
        let sam = try XCTUnwrap(receipts.unreadBy.first { $0.userID == fixture.staff })
        XCTAssertEqual(sam.reached.map(\.via), ["live", "push"])
        XCTAssertEqual(receipts.totals, FunnelTotals(live: 1, push: 1, email: 0, read: 0))
        XCTAssertEqual(receipts.unreadBy.first { $0.userID == fixture.admin }?.reached, [])
    }

    /// A lost phone is cut off at once (docs/security.md): a subscription belongs to the token
    /// that registered it (sql/019). Revoking that token ends the subscription and its queued
    /// retry in the same transaction; a token that expires gets nothing after its expiry;
    /// revoking all of a person's tokens ends all their subscriptions. Their other device keeps
    /// getting pushes meanwhile.
    func testAPhoneIsCutOffFromPushTheMomentItsTokenEnds() throws {
        let sam = fixture.staff
        let phoneToken = try fixture.store.issueToken(user: sam, label: "phone")
        let tabletToken = try fixture.store.issueToken(user: sam, label: "tablet", expiresIn: 4)
        let tabletIssued = Date()
        let phone = try subscribe(phoneToken, "flaky") // 503 first: a retry is queued
        let tablet = try subscribe(tabletToken, "ok", device: "-tablet")
        let laptop = try subscribe(fixture.staffToken, "ok")
        let api = try server.api(fixture.ownerToken)
        _ = try api.sendMessage(event: fixture.event, message: "Gate 3 closes", type: "alert", priority: "urgent", expiresInMinutes: nil)
        service.wait { self.path($0, "/flaky/") }
        let phoneID = try XCTUnwrap(try fixture.store.tokens(ofUser: sam).first { $0.label == "phone" }?.id)
        XCTAssertEqual(try fixture.store.revokeToken(id: phoneID), sam)
        XCTAssertEqual(Set(try fixture.store.pushSubscriptionIDs(user: sam)), [tablet, laptop], "the phone's subscription ended with its token")
        XCTAssertEqual(try fixture.count("SELECT count(*) FROM outbox WHERE kind = 'push' AND subscription_id = $1", [id(phone)]), 0,
                       "and its queued retry with it")

        // The tablet's token runs out: nothing more goes to it, though its row is still there.
        Thread.sleep(until: tabletIssued.addingTimeInterval(5))
        let later = try api.sendMessage(event: fixture.event, message: "Storm: all stages stop", type: "alert", priority: "urgent",
                                        expiresInMinutes: nil)
        service.wait { self.path($0, "/ok/") && self.pushedMessageID($0) == self.id(later.id) }
        Thread.sleep(forTimeInterval: 2)
        XCTAssertEqual(service.requests.filter { path($0, "/flaky/") }.count, 1, "the revoked phone got no retry")
        XCTAssertFalse(service.requests.contains { ($0["path"] as? String)?.contains("-tablet") == true && pushedMessageID($0) == id(later.id) },
                       "the tablet whose token expired got nothing after its expiry")
        XCTAssertEqual(try fixture.count("SELECT count(*) FROM outbox WHERE kind = 'push' AND message_id = $1", [id(later.id)]), 1,
                       "only the laptop's push was queued")

        // Every token of Sam revoked (staffcast admin token revoke --user): no subscription is left.
        XCTAssertGreaterThan(try fixture.store.revokeTokens(user: sam), 0)
        XCTAssertEqual(try fixture.store.pushSubscriptionIDs(user: sam), [])
    }

    /// A correction follows the push (sql/021): "Evacuate hall B" corrected to "hall C" reaches
    /// the phone that showed hall B, as `message_updated` with the same Topic (a push service
    /// still holding the original replaces it; the service worker shows it with the same tag),
    /// and a retract follows as `message_retracted`. A phone subscribed after the original got
    /// neither.
    func testAnEditAndARetractFollowThePushToThePhoneThatGotIt() throws {
        _ = try subscribe(fixture.staffToken, "ok")
        let api = try server.api(fixture.ownerToken)
        let m = try api.sendMessage(event: fixture.event, message: "Evacuate hall B", type: "alert", priority: "high",
                                    expiresInMinutes: 30)
        let phone: ([String: Any]) -> Bool = { self.path($0, "/ok/") && ($0["path"] as? String)?.hasSuffix("-late") == false }
        let original = service.wait { phone($0) && self.pushedMessageID($0) == self.id(m.id) }.first ?? [:]
        let topic = try XCTUnwrap((original["headers"] as? [String: String])?["topic"])
        _ = try subscribe(fixture.adminToken, "ok", device: "-late") // in the audience, but never got the original

        _ = try api.editMessage(m.id, text: "Evacuate hall C")
        let update = service.wait { phone($0) && self.pushed($0)?["op"] as? String == "message_updated" }.first ?? [:]
        XCTAssertNil(update["decrypt_error"], "\(update)")
        XCTAssertEqual(update["vapid_ok"] as? Bool, true, "\(update["vapid_error"] ?? "")")
        let corrected = try XCTUnwrap(pushed(update)?["message"] as? [String: Any], "\(update)")
        XCTAssertEqual(corrected["id"] as? String, id(m.id))
        XCTAssertEqual(corrected["message"] as? String, "Evacuate hall C")
        XCTAssertFalse(corrected["edited_at"] is NSNull, "\(corrected)")
        let headers = update["headers"] as? [String: String] ?? [:]
        XCTAssertEqual(headers["topic"], topic, "the same Topic as the original")
        XCTAssertEqual(headers["urgency"], "normal")

        try api.retractMessage(m.id)
        let retract = service.wait { phone($0) && self.pushed($0)?["op"] as? String == "message_retracted" }.first ?? [:]
        XCTAssertEqual(pushed(retract)?["message_id"] as? String, id(m.id))
        XCTAssertEqual(pushed(retract)?["event_id"] as? String, id(fixture.event))
        XCTAssertEqual((retract["headers"] as? [String: String])?["topic"], topic)

        Thread.sleep(forTimeInterval: 2)
        XCTAssertEqual(service.requests.filter { phone($0) }.compactMap { pushed($0)?["op"] as? String },
                       ["message", "message_updated", "message_retracted"], "each once, in order")
        XCTAssertFalse(service.requests.contains { ($0["path"] as? String)?.hasSuffix("-late") == true },
                       "the phone that never got the original got no correction")
    }
}
