import Foundation
import StaffcastClient
import StaffcastCore
import StaffcastPostgres
import StaffcastServer
import XCTest

/// Catch-up of any length: `subscribed` says `more` when the gap is longer than one page, the
/// client pages with `history` + `after_seq`, and live messages meanwhile arrive as usual:
/// no gap, no duplicate. The HTTP listing says `more` too.
final class CatchUpPagingTests: IntegrationTestCase {
    override class var startsServer: Bool { true }

    /// Inserts `n` messages in one statement (as the owner, fast).
    func insert(_ n: Int) throws {
        try fixture.store.conn.query("""
            INSERT INTO staff_messages (event_id, sender_id, message, message_type, priority)
            SELECT $1, $2, 'bulk ' || g, 'broadcast', 'normal' FROM generate_series(1, $3::int) g
            """, [fixture.event.uuidString.lowercased(), fixture.owner.uuidString.lowercased(), String(n)])
    }

    func testALongGapIsPagedWithAfterSeqWithoutGapOrDuplicate() throws {
        let first = try fixture.store.send(as: fixture.owner, SendRequest(eventID: fixture.event, message: "before the gap"))
        try insert(Limits.maxCatchUp + 450)
        let staff = try server.connect(fixture.staffToken)
        try staff.send(["op": "subscribe", "event_id": fixture.event.uuidString, "since_seq": first.seq, "ref": "s"])
        guard case .subscribed(_, _, let page, _, let more) = try staff.expect("subscribed", timeout: 10) else { return XCTFail() }
        XCTAssertTrue(more, "a gap longer than one page says more")
        XCTAssertEqual(page.count, Limits.maxCatchUp)
        var seen = page.map(\.seq)
        // A live message while paging.
        let live = try fixture.store.send(as: fixture.owner, SendRequest(eventID: fixture.event, message: "live during paging"))
        var liveSeen: [Int64] = []
        var last = try XCTUnwrap(seen.last)
        var pages = 0
        paging: while true {
            try staff.send(["op": "history", "event_id": fixture.event.uuidString, "after_seq": last, "limit": 200, "ref": "p\(pages)"])
            while true {
                let frame = try staff.next(timeout: 10)
                if case .message(let m) = frame { liveSeen.append(m.seq); continue }
                guard case .history(let ref, _, let messages, let more) = frame else { continue }
                XCTAssertEqual(ref, "p\(pages)")
                pages += 1
                seen += messages.map(\.seq)
                if let l = messages.last?.seq { last = l }
                if !more { break paging }
                break
            }
        }
        // The last page may be read before the live frame comes (the pages read the table, the
        // frame comes through the change feed): it must still come, live.
        while liveSeen.isEmpty, let frame = try staff.nextOrNil(timeout: 5) {
            if case .message(let m) = frame { liveSeen.append(m.seq) }
        }
        try staff.expectSilence(0.3) // and only once
        XCTAssertEqual(liveSeen, [live.seq], "the live message arrived live, once")
        // Paging returns everything after the cursor, the live one included; together: no gap.
        XCTAssertEqual(Set(seen).count, seen.count, "no duplicate within the pages")
        XCTAssertEqual(seen, seen.sorted())
        XCTAssertEqual(seen.count, Limits.maxCatchUp + 450 + 1)
        XCTAssertEqual(seen.last, live.seq)
        XCTAssertGreaterThanOrEqual(pages, 3)
    }

    func testTheHTTPListingSaysMoreAndPagesToTheEnd() throws {
        try insert(250)
        let api = try server.api(fixture.staffToken)
        var since: Int64 = 0
        var total = 0
        var rounds = 0
        while true {
            let data = try api.call("GET", "/v1/events/\(fixture.event.uuidString)/messages", query: ["since_seq": "\(since)", "limit": "100"])
            let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: data) as? [String: Any])
            let messages = try XCTUnwrap(object["messages"] as? [[String: Any]])
            let more = try XCTUnwrap(object["more"] as? Bool)
            total += messages.count
            rounds += 1
            since = Int64(try XCTUnwrap(messages.last?["seq"] as? Int))
            if !more { break }
            XCTAssertEqual(messages.count, 100)
        }
        XCTAssertEqual(total, 250)
        XCTAssertEqual(rounds, 3)
        let newest = try JSONSerialization.jsonObject(with: try api.call("GET", "/v1/events/\(fixture.event.uuidString)/messages")) as? [String: Any]
        XCTAssertEqual((newest?["messages"] as? [Any])?.count, Limits.defaultHistoryLimit)
        XCTAssertEqual(newest?["more"] as? Bool, true)
    }

    func testASubscriberSessionPagesALongGapAndShowsEveryMessageOnceInOrder() throws {
        let first = try fixture.store.send(as: fixture.owner, SendRequest(eventID: fixture.event, message: "seen before"))
        let dir = NSTemporaryDirectory() + "sc-cursor-\(UUID().uuidString.prefix(8))"
        let cursors = CursorStore(directory: URL(fileURLWithPath: dir))
        cursors.save(fixture.event.uuidString.lowercased(), first.seq)
        try insert(Limits.maxCatchUp + 300)
        let session = SubscriberSession(webSocketURL: server.ws, token: fixture.staffToken, eventID: fixture.event, cursors: cursors)
        var shown: [Int64] = []
        let deadline = Date().addingTimeInterval(20)
        let expected = Limits.maxCatchUp + 300
        session.run(shouldStop: { shown.count >= expected || Date() > deadline }, tick: {}) { update in
            switch update {
            case .subscribed(_, _, let fresh, _): shown += fresh.map(\.seq)
            case .message(let m): shown.append(m.seq)
            default: break
            }
        }
        XCTAssertEqual(shown.count, expected)
        XCTAssertEqual(shown, shown.sorted())
        XCTAssertEqual(Set(shown).count, shown.count)
    }
}
