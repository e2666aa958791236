import Foundation
import StaffcastClient
import StaffcastCore
import StaffcastServer
import XCTest

/// Everything that arrives together commits together (issue 21): pipelined HTTP sends are one
/// batch, a WebSocket publisher with thousands of sends in flight is slowed by back-pressure
/// and never refused for it, and the one refusal left (the send rate limit) names itself.
/// Batches are observed from outside, on /metrics (`staffcast_send_batch_size`). Deadlines
/// here are liveness bounds, never speed.
final class CommitTogetherTests: IntegrationTestCase {
    var messagesPath: String { "/v1/events/\(fixture.event.uuidString.lowercased())/messages" }

    /// `_count` and `_sum` of the send batch size histogram.
    func batchSizes(_ server: TestServer) throws -> (batches: Int, sends: Int) {
        let text = String(decoding: try server.api(nil).call("GET", "/metrics"), as: UTF8.self)
        func value(_ name: String) -> Int {
            let line = text.split(separator: "\n").first { $0.hasPrefix(name + " ") }
            return line.flatMap { Double($0.split(separator: " ").last ?? "") }.map { Int($0) } ?? 0
        }
        return (value("staffcast_send_batch_size_count"), value("staffcast_send_batch_size_sum"))
    }

    /// Sixteen sends in one `send()` on one keep-alive connection (what the front lets wait at
    /// once): one transaction for all, and sixteen answers in the order they were asked.
    func testPipelinedSendsOnOneConnectionCommitInOneBatchAndAreAnsweredInOrder() throws {
        let server = try startServer { $0.sendBurst = 1_000; $0.sendRatePerSecond = 1_000 }
        // The token is known and the database connection open before the pipeline.
        _ = try server.api(fixture.ownerToken).call("POST", messagesPath, body: Data(#"{"message":"warm-up"}"#.utf8), contentType: "application/json")
        let before = try batchSizes(server)
        XCTAssertEqual(before.sends, 1)

        let count = 16 // HTTPConnection.maxPipelined: the front reads no further while 16 wait
        let pipeline = (0..<count).flatMap { i in
            RawSocket.request("POST", messagesPath, port: server.port,
                              headers: [("Authorization", "Bearer \(fixture.ownerToken)"), ("Content-Type", "application/json")],
                              body: Array(#"{"message":"pipelined \#(i)"}"#.utf8))
        }
        let socket = try RawSocket(port: server.port)
        try socket.sendOnce(pipeline)
        let deadline = Date().addingTimeInterval(30)
        var messages: [StaffMessage] = []
        for i in 0..<count {
            let r = try socket.readResponse(deadline: deadline)
            XCTAssertEqual(r.status, 201, "answer \(i): \(r)")
            messages.append(try JSONDecoder().decode(StaffMessage.self, from: Data(r.body)))
        }
        XCTAssertEqual(messages.map(\.message), (0..<count).map { "pipelined \($0)" }, "answered in the order asked")
        XCTAssertEqual(messages.map(\.seq), messages.map(\.seq).sorted(), "committed in the order asked")
        let after = try batchSizes(server)
        XCTAssertEqual(after.sends - before.sends, count)
        XCTAssertEqual(after.batches - before.batches, 1, "the pipelined sends were one batch: \(before) then \(after)")
        XCTAssertEqual(fixture.messageCount, count + 1)
    }

    /// 3,000 sends written back to back while the answers are read: every one committed and
    /// answered, in order, none refused, although only `max_in_flight_per_connection` (32)
    /// wait on the database at once: the server stops reading instead of refusing.
    func testAWebSocketSenderWithThousandsOfSendsInFlightGetsEveryOneCommittedInOrder() throws {
        try sendThousandsInFlight(eventLoop: .ev)
    }

    /// The same on the poll loop: libwebsockets stops reading through each event library.
    func testAWebSocketSenderWithThousandsOfSendsInFlightOnThePollLoop() throws {
        try sendThousandsInFlight(eventLoop: .poll)
    }

    func sendThousandsInFlight(eventLoop: EventLoopKind) throws {
        let server = try startServer {
            $0.eventLoop = eventLoop
            $0.sendBurst = 100_000
            $0.sendRatePerSecond = 100_000
            $0.heartbeatInterval = 600 // no ping to answer from the reading thread while the writer writes
        }
        let before = try batchSizes(server)
        let owner = try server.connect(fixture.ownerToken)
        let total = 3_000
        let event = fixture.event.uuidString.lowercased()
        let frames = (0..<total).map { #"{"op":"send","ref":"s\#($0)","event_id":"\#(event)","message":"in flight \#($0)"}"# }
        // The writer thread only writes and this one only reads (no ping is due to answer).
        let client = UncheckedClient(owner.client)
        let writer = Thread {
            for frame in frames { guard (try? client.client.send(text: frame)) != nil else { return } }
        }
        writer.start()
        var refs: [String] = []
        var seqs: [Int64] = []
        while refs.count < total {
            let frame = try owner.next(timeout: 60)
            switch frame {
            case .sent(let ref?, let message):
                refs.append(ref)
                seqs.append(message.seq)
                XCTAssertEqual(message.message, "in flight \(ref.dropFirst())")
            case .error(let ref, let e):
                return XCTFail("send \(ref ?? "?") refused after \(refs.count) answers: \(e.code) \(e.message)")
            default:
                continue
            }
        }
        XCTAssertEqual(refs, (0..<total).map { "s\($0)" }, "answered in the order sent")
        XCTAssertEqual(seqs, seqs.sorted(), "committed in the order sent")
        XCTAssertEqual(fixture.messageCount, total)
        let after = try batchSizes(server)
        XCTAssertEqual(after.sends - before.sends, total)
        XCTAssertLessThan(after.batches - before.batches, total, "sends in flight joined batches")
    }

    /// The per-connection send rate limit is real: past it a send is refused, stores nothing,
    /// and the refusal says which limit it hit (WebSocket and HTTP alike).
    func testASenderOverTheSendRateLimitIsRefusedWithThatLimitNamed() throws {
        let server = try startServer { $0.sendBurst = 3; $0.sendRatePerSecond = 0.01 }
        let owner = try server.connect(fixture.ownerToken)
        let event = fixture.event.uuidString.lowercased()
        for i in 0..<5 { try owner.send(["op": "send", "ref": "r\(i)", "event_id": event, "message": "burst \(i)"]) }
        var sent: [String] = [], refused: [String] = []
        while sent.count + refused.count < 5 {
            switch try owner.next(timeout: 30) {
            case .sent(let ref?, _): sent.append(ref)
            case .error(let ref?, let e):
                XCTAssertEqual(e.code, .rateLimited)
                XCTAssertTrue(e.message.contains("send rate limit") && e.message.contains("a burst of 3"), e.message)
                refused.append(ref)
            default: continue
            }
        }
        XCTAssertEqual(sent, ["r0", "r1", "r2"])
        XCTAssertEqual(refused, ["r3", "r4"])
        XCTAssertEqual(fixture.messageCount, 3, "refused sends stored nothing")

        let api = try server.api(fixture.adminToken)
        for i in 0..<3 { _ = try api.call("POST", messagesPath, body: Data(#"{"message":"http \#(i)"}"#.utf8), contentType: "application/json") }
        XCTAssertThrowsError(try api.call("POST", messagesPath, body: Data(#"{"message":"http over"}"#.utf8), contentType: "application/json")) {
            guard case ClientError.server(let code, let message, let status) = $0 else { return XCTFail("\($0)") }
            XCTAssertEqual(code, "rate_limited")
            XCTAssertEqual(status, 429)
            XCTAssertTrue(message.contains("send rate limit"), message)
        }
        XCTAssertEqual(fixture.messageCount, 6)
    }
}

/// A client handed to one writer thread while the test's thread reads it.
private final class UncheckedClient: @unchecked Sendable {
    let client: WebSocketClient
    init(_ client: WebSocketClient) { self.client = client }
}
