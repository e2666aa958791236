import StaffcastCore
import XCTest

/// `HTTPConnectionMachine` driven as a service loop drives it, without sockets: bytes in, the
/// answers a loop would give, ticks at chosen times (monotonic seconds), and what it asks for
/// read back from its actions and its `output`.
final class HTTPConnectionMachineTests: XCTestCase {
    typealias Machine = HTTPConnectionMachine

    func machine(_ tweak: (inout HTTPConnectionLimits) -> Void = { _ in }) -> Machine {
        var limits = HTTPConnectionLimits(headerTimeout: 10, idleTimeout: 60, writeStallTimeout: 15)
        tweak(&limits)
        return Machine(limits: limits, now: 0)
    }

    func get(_ path: String = "/healthz", _ extra: String = "") -> [UInt8] {
        Array("GET \(path) HTTP/1.1\r\nHost: staffcast.test\r\n\(extra)\r\n".utf8)
    }

    func upgradeRequest(_ path: String = "/v1/ws", _ extra: String = "") -> [UInt8] {
        Array(("GET \(path) HTTP/1.1\r\nHost: staffcast.test\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
            + "Authorization: Bearer sc_test\r\n\(extra)\r\n").utf8)
    }

    func answer(_ text: String) -> [UInt8] {
        Array("HTTP/1.1 200 OK\r\nContent-Length: \(text.utf8.count)\r\n\r\n\(text)".utf8)
    }

    /// A machine that read a GET at 0 and was given its answer (`text`) at `now`.
    func answeredGet(_ text: String = "ok", at now: Double) -> Machine {
        var m = machine()
        _ = m.received(get(), now: 0)
        _ = m.answered(slot: 0, answer(text), now: now)
        return m
    }

    /// The requests served, as "slot path keep-alive".
    func served(_ actions: [HTTPConnectionAction]) -> [String] {
        actions.compactMap {
            guard case .serve(let request, let slot, let keepAlive, let headOnly) = $0 else { return nil }
            return "\(slot) \(request.head.method) \(request.head.path)\(keepAlive ? "" : " close")\(headOnly ? " head-only" : "")"
        }
    }

    func refusals(_ actions: [HTTPConnectionAction]) -> [(slot: Int, status: Int)] {
        actions.compactMap {
            guard case .refuse(let slot, let refusal) = $0 else { return nil }
            return (slot, refusal.status)
        }
    }

    func closes(_ actions: [HTTPConnectionAction]) -> [Bool] {
        actions.compactMap { if case .close(let reset) = $0 { return reset } else { return nil } }
    }

    /// Writes everything the machine holds, as a socket that takes it all would.
    @discardableResult
    func drainOutput(_ m: inout Machine, now: Double) -> (text: String, actions: [HTTPConnectionAction]) {
        let text = String(decoding: m.output, as: UTF8.self)
        m.wrote(m.output.count, now: now)
        return (text, m.flushed(held: false, now: now))
    }

    // MARK: keep-alive and pipelining

    func testOneRequestIsServedAndTheConnectionKeptAlive() {
        var m = machine()
        let actions = m.received(get(), now: 1)
        XCTAssertEqual(served(actions), ["0 GET /healthz"])
        XCTAssertEqual(actions.last, .flush)
        XCTAssertTrue(m.output.isEmpty, "nothing leaves before the answer")
        XCTAssertEqual(m.answered(slot: 0, answer("ok"), now: 2), [.flush])
        let (text, after) = drainOutput(&m, now: 2)
        XCTAssertTrue(text.hasSuffix("\r\n\r\nok"), text)
        XCTAssertEqual(after, [], "kept alive")
        XCTAssertFalse(m.isClosed)
    }

    func testConnectionCloseClosesAfterTheLastByteOfTheAnswer() {
        var m = machine()
        XCTAssertEqual(served(m.received(get("/healthz", "Connection: close\r\n"), now: 0)), ["0 GET /healthz close"])
        XCTAssertEqual(served(m.received(get("/readyz"), now: 0)), [], "nothing after Connection: close is framed")
        _ = m.answered(slot: 0, answer("ok"), now: 1)
        m.wrote(3, now: 1)
        XCTAssertEqual(m.flushed(held: true, now: 1), [], "not while bytes are still on their way")
        XCTAssertEqual(closes(drainOutput(&m, now: 2).actions), [false])
    }

    func testHTTP10WithoutKeepAliveClosesAndHeadHasNoBody() {
        var m = machine()
        XCTAssertEqual(served(m.received(Array("HEAD /healthz HTTP/1.0\r\n\r\n".utf8), now: 0)), ["0 HEAD /healthz close head-only"])
    }

    func testPipelinedAnswersLeaveInRequestOrder() {
        var m = machine()
        XCTAssertEqual(served(m.received(get("/a") + get("/b") + get("/c"), now: 0)), ["0 GET /a", "1 GET /b", "2 GET /c"])
        _ = m.answered(slot: 2, answer("c"), now: 1)
        _ = m.answered(slot: 1, answer("b"), now: 1)
        XCTAssertTrue(m.output.isEmpty, "b and c wait for a")
        _ = m.answered(slot: 0, answer("a"), now: 1)
        let text = drainOutput(&m, now: 1).text
        let order = ["\r\n\r\na", "\r\n\r\nb", "\r\n\r\nc"].map { text.range(of: $0)!.lowerBound }
        XCTAssertEqual(order, order.sorted())
        XCTAssertEqual(m.answered(slot: 0, answer("again"), now: 1), [], "a slot is answered once")
    }

    func testAtMostSixteenWaitThenFramingWaitsForAnswers() {
        var m = machine()
        let twenty = (0..<20).flatMap { get("/r\($0)") }
        XCTAssertEqual(served(m.received(twenty, now: 0)).count, 16)
        XCTAssertEqual(m.waitingAnswers, 16)
        XCTAssertEqual(served(m.answered(slot: 0, answer("0"), now: 1)), ["16 GET /r16"])
        XCTAssertEqual(m.waitingAnswers, 16)
    }

    func testReadingStopsWhenTooMuchWaitsAndResumesAsAnswersGoOut() {
        var m = machine { $0.maxPipelined = 1; $0.maxBuffered = 60 }
        let first = m.received(get("/a"), now: 0)
        XCTAssertEqual(served(first), ["0 GET /a"])
        XCTAssertFalse(first.contains(.stopReading))
        let more = m.received(get("/b") + get("/c"), now: 0)
        XCTAssertEqual(served(more), [], "the pipeline is full")
        XCTAssertTrue(more.contains(.stopReading))
        XCTAssertFalse(m.wantsInput)
        let next = m.answered(slot: 0, answer("a"), now: 1)
        XCTAssertEqual(served(next), ["1 GET /b"])
        XCTAssertTrue(next.contains(.resumeReading))
        XCTAssertTrue(m.wantsInput)
    }


    /// The attack this guards against: thousands of requests pipelined on one connection whose
    /// answers are never read. Answers are produced only while fewer than `maxQueuedOutput`
    /// bytes of them wait to leave; then reading stops too, and both go on as answers leave.
    func testAClientThatPipelinesAndNeverReadsIsNotServedFurtherUntilItsAnswersLeave() {
        var m = machine { $0.maxQueuedOutput = 1_000; $0.maxBuffered = 2_000 }
        var actions = m.received((0..<200).flatMap { get("/r\($0)") }, now: 0)
        var servedSlots = 0
        // Answer everything framed, as the API would, never writing: what is framed stays bounded.
        while case let slots = served(actions), !slots.isEmpty {
            servedSlots += slots.count
            actions = []
            for s in slots { actions += m.answered(slot: Int(s.split(separator: " ")[0])!, answer(String(repeating: "x", count: 300)), now: 1) }
        }
        XCTAssertTrue(m.framingHeldByOutput)
        XCTAssertLessThan(m.output.count, 1_000 + 16 * 400, "at most the cap and the answers of the pipeline wait")
        XCTAssertLessThan(servedSlots, 20, "no request is framed once the answers waiting pass the cap")
        // The unframed requests fill the input buffer: reading stops.
        actions = m.received((200..<260).flatMap { get("/r\($0)") }, now: 1)
        XCTAssertTrue(m.isReadPaused || !m.wantsInput)
        XCTAssertEqual(served(actions), [])
        XCTAssertEqual(m.flushed(held: true, now: 1), [], "nothing left: framing stays held")
        // The client reads: the answers leave, framing and reading go on.
        m.wrote(m.output.count, now: 2)
        let resumed = m.flushed(held: false, now: 2)
        XCTAssertFalse(served(resumed).isEmpty, "framing goes on once the answers left")
        XCTAssertFalse(m.framingHeldByOutput)
    }
    func testBytesArrivingInPiecesAreFramedOnceWhole() {
        var m = machine()
        let request = get("/healthz")
        XCTAssertEqual(served(m.received(request[0..<10], now: 0)), [])
        XCTAssertEqual(served(m.received(request[10...], now: 1)), ["0 GET /healthz"])
    }

    // MARK: Expect: 100-continue

    func testExpectContinueIsAnsweredOnceBeforeTheBody() {
        var m = machine()
        let head = "POST /v1/events/x/messages HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n"
        XCTAssertEqual(served(m.received(Array(head.utf8), now: 0)), [])
        XCTAssertEqual(String(decoding: m.output, as: UTF8.self), "HTTP/1.1 100 Continue\r\n\r\n")
        m.wrote(m.output.count, now: 0)
        XCTAssertEqual(served(m.received(Array("he".utf8), now: 0)), [])
        XCTAssertTrue(m.output.isEmpty, "100 Continue once")
        XCTAssertEqual(served(m.received(Array("llo".utf8), now: 0)), ["0 POST /v1/events/x/messages"])
    }

    func testExpectContinueWaitsWhileAnEarlierAnswerIsPending() {
        var m = machine()
        let post = "POST /v1/x HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n"
        XCTAssertEqual(served(m.received(get("/a") + Array(post.utf8), now: 0)), ["0 GET /a"])
        XCTAssertTrue(m.output.isEmpty)
        _ = m.answered(slot: 0, answer("a"), now: 1)
        XCTAssertTrue(String(decoding: m.output, as: UTF8.self).hasSuffix("\r\n\r\naHTTP/1.1 100 Continue\r\n\r\n"))
    }

    // MARK: deadlines

    func testAHeadThatDoesNotArriveInTimeIs408ThenClosed() {
        var m = machine()
        _ = m.received(Array("GET /healthz HTTP/1.1\r\nHo".utf8), now: 1)
        XCTAssertEqual(m.tick(now: 10.9, queuedElsewhere: 0), [])
        let late = m.tick(now: 11, queuedElsewhere: 0)
        XCTAssertEqual(refusals(late).map(\.status), [408])
        XCTAssertEqual(refusals(late).map(\.slot), [0])
        guard case .refuse(_, let refusal)? = late.first, case .error(let error) = refusal.reason else { return XCTFail("\(late)") }
        XCTAssertTrue(error.message.contains("did not arrive in time (10 s)"), error.message)
        XCTAssertEqual(m.answered(slot: 0, answer("408"), now: 11), [.flush])
        XCTAssertEqual(closes(drainOutput(&m, now: 11).actions), [false])
    }

    func testABodyThatStallsIs408() {
        var m = machine()
        _ = m.received(Array("POST /v1/x HTTP/1.1\r\nHost: h\r\nContent-Length: 10\r\n\r\nabc".utf8), now: 0)
        _ = m.received(Array("d".utf8), now: 5)
        XCTAssertEqual(refusals(m.tick(now: 10, queuedElsewhere: 0)).map(\.status), [408], "the whole request is due in header_timeout")
    }

    func testNoDeadlineWhileARequestIsBeingAnswered() {
        var m = machine()
        _ = m.received(get("/a") + Array("GET /b HT".utf8), now: 0)
        XCTAssertEqual(m.tick(now: 30, queuedElsewhere: 0), [], "the slow one is the server's answer, not the client")
    }

    func testAFreshConnectionWithNothingSentIsClosedAtTheHeaderTimeout() {
        var m = machine()
        XCTAssertEqual(m.tick(now: 9, queuedElsewhere: 0), [])
        XCTAssertEqual(m.tick(now: 10, queuedElsewhere: 0), [.close(reset: false)])
        XCTAssertEqual(m.received(get(), now: 11), [], "closed")
    }

    func testAnIdleKeptAliveConnectionIsClosedAtTheIdleTimeout() {
        var m = answeredGet(at: 1)
        drainOutput(&m, now: 2)
        XCTAssertEqual(m.tick(now: 30, queuedElsewhere: 0), [], "past header_timeout, but it has been served")
        XCTAssertEqual(m.tick(now: 61.9, queuedElsewhere: 0), [])
        XCTAssertEqual(m.tick(now: 62, queuedElsewhere: 0), [.close(reset: false)])
    }

    func testAnAnswerThatStopsMovingIsReset() {
        var m = answeredGet(String(repeating: "x", count: 1_000), at: 1)
        m.wrote(100, now: 1)
        XCTAssertEqual(m.tick(now: 2, queuedElsewhere: 50_000), [])
        XCTAssertEqual(m.tick(now: 10, queuedElsewhere: 40_000), [], "the kernel's queue shrank: progress")
        XCTAssertEqual(m.tick(now: 24.9, queuedElsewhere: 40_000), [])
        XCTAssertEqual(m.tick(now: 25, queuedElsewhere: 40_000), [.close(reset: true)])
    }

    func testAKernelQueueThatDoesNotShrinkIsAStallEvenWithNothingOfOurs() {
        var m = answeredGet(at: 0)
        drainOutput(&m, now: 0)
        XCTAssertEqual(m.tick(now: 1, queuedElsewhere: 300), [])
        XCTAssertEqual(m.tick(now: 15, queuedElsewhere: 300), [.close(reset: true)])
    }

    // MARK: framing errors, the peer, drain

    func testAFramingErrorIsAnsweredWithItsStatusThenClosed() {
        var m = machine()
        let actions = m.received(get("/a") + Array("BROKEN\r\n\r\n".utf8), now: 0)
        XCTAssertEqual(served(actions), ["0 GET /a"])
        XCTAssertEqual(refusals(actions).map(\.slot), [1])
        XCTAssertEqual(refusals(actions).map(\.status), [400])
        guard case .refuse(_, let refusal)? = actions.first(where: { if case .refuse = $0 { true } else { false } }),
              case .framing = refusal.reason else { return XCTFail("\(actions)") }
        _ = m.answered(slot: 1, answer("400"), now: 0)
        XCTAssertTrue(m.output.isEmpty, "after the first answer")
        _ = m.answered(slot: 0, answer("a"), now: 0)
        XCTAssertEqual(closes(drainOutput(&m, now: 0).actions), [false])
    }

    /// A body in one-byte chunks whose framing fills the buffer before the body reaches its
    /// limit used to stop reading for good and end in 408 at the header timeout.
    func testARequestThatCannotFitTheBufferIs413NotAStall() {
        var m = machine { $0.maxBuffered = 400 }
        let head = Array("POST /v1/x HTTP/1.1\r\nHost: staffcast.test\r\nTransfer-Encoding: chunked\r\n\r\n".utf8)
        let tinyChunks = (0..<100).flatMap { _ in Array("1\r\nx\r\n".utf8) }
        let actions = m.received(head + tinyChunks, now: 0)
        XCTAssertEqual(refusals(actions).map(\.status), [413])
        XCTAssertFalse(actions.contains(.stopReading))
        // With a request ahead of it, a full buffer is back-pressure, not a refusal.
        var busy = machine { $0.maxBuffered = 400 }
        XCTAssertEqual(served(busy.received(get("/a"), now: 0)), ["0 GET /a"])
        let waiting = busy.received(head + tinyChunks, now: 0)
        XCTAssertEqual(refusals(waiting).map(\.status), [])
        XCTAssertTrue(waiting.contains(.stopReading))
    }

    func testThePeersEndClosesOnceTheAnswersAreOut() {
        var m = machine()
        _ = m.received(get(), now: 0)
        XCTAssertEqual(m.peerClosed(), [], "its answer is still due")
        _ = m.answered(slot: 0, answer("ok"), now: 1)
        XCTAssertEqual(closes(drainOutput(&m, now: 1).actions), [false])

        var idle = machine()
        XCTAssertEqual(idle.peerClosed(), [.close(reset: false)])
    }

    func testDrainFinishesWhatWasFramedThenCloses() {
        var m = machine()
        _ = m.received(get("/a"), now: 0)
        XCTAssertEqual(m.beginDrain(), [.flush])
        XCTAssertEqual(m.flushed(held: false, now: 0), [], "its answer is still due")
        XCTAssertEqual(served(m.received(get("/b"), now: 0)), [], "nothing new is framed")
        _ = m.answered(slot: 0, answer("a"), now: 1)
        XCTAssertEqual(closes(drainOutput(&m, now: 1).actions), [false])

        var idle = machine()
        XCTAssertEqual(idle.beginDrain(), [.flush])
        XCTAssertEqual(idle.flushed(held: false, now: 0), [.close(reset: false)])
    }

    // MARK: the upgrade decision

    func testAnUpgradeIsCheckedThenAdmittedWithTheBytesReadSoFar() {
        var m = machine()
        let request = upgradeRequest()
        let actions = m.received(request, now: 0)
        guard case .checkToken(let head)? = actions.first else { return XCTFail("\(actions)") }
        XCTAssertEqual(head.bearerToken, "sc_test")
        XCTAssertEqual(m.upgrade, .checkingToken(head))
        let frame: [UInt8] = [0x81, 0x80, 1, 2, 3, 4]
        XCTAssertEqual(served(m.received(frame, now: 0)), [], "nothing is framed while the upgrade is decided")
        XCTAssertEqual(m.tick(now: 30, queuedElsewhere: 0), [], "the token lookup has its own deadline")
        XCTAssertEqual(m.tokenChecked(refusal: nil), [.admit(head)])
        XCTAssertEqual(m.handOver(), frame, "what followed the upgrade request")
        XCTAssertTrue(m.isClosed)
        XCTAssertEqual(m.tick(now: 100, queuedElsewhere: 0), [])
    }

    func testABadTokenOrAFullServerRefusesTheUpgradeWithItsStatus() {
        var m = machine()
        _ = m.received(upgradeRequest(), now: 0)
        let refused = m.tokenChecked(refusal: StaffcastError(.unauthorized, "The token is not valid."))
        XCTAssertEqual(refusals(refused).map(\.status), [401])
        XCTAssertNil(m.upgrade)

        var full = machine()
        _ = full.received(upgradeRequest(), now: 0)
        _ = full.tokenChecked(refusal: nil)
        XCTAssertEqual(refusals(full.upgradeRefused(StaffcastError(.rateLimited, "Too many connections."))).map(\.status), [429])
        _ = full.answered(slot: 0, answer("429"), now: 0)
        XCTAssertEqual(closes(drainOutput(&full, now: 0).actions), [false], "a refused upgrade closes after its answer")
    }

    func testUpgradeChecksBeforeTheToken() {
        var wrongPath = machine()
        XCTAssertEqual(refusals(wrongPath.received(upgradeRequest("/ws"), now: 0)).map(\.status), [404])

        var tooLarge = machine()
        // A head under the parser's 8 KiB, with frame bytes after it: together past the limit.
        let big = upgradeRequest("/v1/ws", "X-Padding: \(String(repeating: "p", count: 7_700))\r\n") + [UInt8](repeating: 0x81, count: 600)
        let refused = tooLarge.received(big, now: 0)
        XCTAssertEqual(refusals(refused).map(\.status), [431])
        guard case .refuse(_, let refusal)? = refused.first, case .error(let error) = refusal.reason else { return XCTFail("\(refused)") }
        XCTAssertTrue(error.message.contains("8,192 bytes"), error.message)

        var draining = machine()
        _ = draining.beginDrain()
        XCTAssertEqual(served(draining.received(upgradeRequest(), now: 0)), [], "a draining connection frames nothing new")
    }

    func testADrainDuringTheTokenLookupRefusesTheUpgrade() {
        var m = machine()
        _ = m.received(upgradeRequest(), now: 0)
        _ = m.beginDrain()
        XCTAssertEqual(refusals(m.tokenChecked(refusal: nil)).map(\.status), [503])
    }

    func testAnUpgradeBehindAPipelinedRequestWaitsForItsAnswerToLeave() {
        var m = machine()
        let actions = m.received(get("/a") + upgradeRequest(), now: 0)
        XCTAssertEqual(served(actions), ["0 GET /a"])
        XCTAssertFalse(actions.contains { if case .checkToken = $0 { true } else { false } })
        _ = m.answered(slot: 0, answer("a"), now: 1)
        m.wrote(2, now: 1)
        XCTAssertEqual(m.flushed(held: true, now: 1), [], "part of the answer is still ours")
        let after = drainOutput(&m, now: 2).actions
        guard case .checkToken(let head)? = after.first else { return XCTFail("\(after)") }
        XCTAssertEqual(head.path, "/v1/ws")
    }

    func testEventsAfterAnUpgradeIsDecidedAreIgnored() {
        var m = machine()
        XCTAssertEqual(m.tokenChecked(refusal: nil), [], "no upgrade waits")
        XCTAssertEqual(m.upgradeRefused(.invalid("x")), [])
    }
}
