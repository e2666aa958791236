/// The rules of one HTTP/1.1 connection, from its accept until it closes or becomes a
/// WebSocket: keep-alive, pipelined requests answered in order, `Expect: 100-continue`, the
/// deadlines (a request that does not arrive whole in `headerTimeout` gets 408, an idle
/// connection is closed after `idleTimeout`, an answer that stops moving is reset), the checks
/// of an upgrade, and `Connection: close` once the last answer is out.
///
/// A pure state machine like `FanoutEngine`: bytes, answers and ticks in, `HTTPConnectionAction`s
/// out; no I/O, no clock (every event is given `now`, monotonic seconds). Framing is
/// `HTTPRequestParser`'s. Not thread-safe: the service loop that owns the connection calls it
/// from its thread, and translates its actions into system calls (plain sockets) or
/// libwebsockets calls (TLS).
public struct HTTPConnectionMachine: Sendable {
    public let limits: HTTPConnectionLimits
    let parser: HTTPRequestParser

    /// Bytes read and not framed yet.
    public private(set) var input: [UInt8] = []
    /// Answers ready to leave, in request order (`flush`).
    public private(set) var output: [UInt8] = []
    /// One slot per framed request, in order; filled by `answered`.
    var slots: [(id: Int, bytes: [UInt8]?)] = []
    /// Requests framed so far (the next slot's id).
    public private(set) var framed = 0
    /// No request after the ones framed so far will be read (Connection: close, a framing
    /// error, the peer's end of stream, or drain): close once the answers are out.
    public private(set) var closeAfterAnswers = false
    public private(set) var isReadPaused = false
    /// The WebSocket upgrade being decided, if any: nothing more is framed meanwhile.
    public private(set) var upgrade: Upgrade?
    /// The connection was closed or handed over: every later event is ignored.
    public private(set) var isClosed = false
    var draining = false
    var sentContinue = false
    /// An upgrade request waits for earlier answers to leave (`flushed` takes it up again).
    var upgradeBehindOutput = false
    /// How many bytes of `input` the upgrade request being decided takes.
    var upgradeHeadLength = 0
    /// Framing stopped because `maxQueuedOutput` bytes of answers wait to leave: a client
    /// that pipelines and does not read is not served further (`flushed` takes it up again).
    public private(set) var framingHeldByOutput = false
    /// Monotonic seconds: when the request being received began (or the connection opened),
    /// when anything last happened, and when written bytes last left.
    var requestStartedAt: Double
    var lastActivity: Double
    var lastWriteProgress: Double
    /// Bytes waiting to leave at the last tick, wherever they wait.
    var lastQueued = 0

    public enum Upgrade: Sendable, Equatable {
        case checkingToken(HTTPRequestHead)
        case admitting(HTTPRequestHead)
    }

    public init(limits: HTTPConnectionLimits, parser: HTTPRequestParser = HTTPRequestParser(), now: Double) {
        self.limits = limits
        self.parser = parser
        requestStartedAt = now
        lastActivity = now
        lastWriteProgress = now
    }

    /// Requests framed whose answers have not all left yet.
    public var waitingAnswers: Int { slots.count }
    /// Whether the transport should read more now.
    public var wantsInput: Bool { !isClosed && !isReadPaused && input.count < limits.maxBuffered }
    var isIdle: Bool { input.isEmpty && slots.isEmpty && output.isEmpty }
    var isFinished: Bool { closeAfterAnswers && slots.isEmpty && output.isEmpty }

    // MARK: events

    /// Bytes arrived (plain: read from the socket; TLS: decrypted by libwebsockets).
    public mutating func received<Bytes: Collection>(_ bytes: Bytes, now: Double) -> [HTTPConnectionAction] where Bytes.Element == UInt8 {
        guard !isClosed, !bytes.isEmpty else { return [] }
        if input.isEmpty { requestStartedAt = now }
        input.append(contentsOf: bytes)
        lastActivity = now
        return frame(now: now)
    }

    /// The peer ended its side: what was framed is still answered, then the connection closes.
    public mutating func peerClosed() -> [HTTPConnectionAction] {
        guard !isClosed else { return [] }
        closeAfterAnswers = true
        guard slots.isEmpty, output.isEmpty else { return [] }
        return close(reset: false)
    }

    /// The answer of `slot` is ready (the bytes of a whole response). An unknown slot (the
    /// connection was closed meanwhile) is ignored.
    public mutating func answered(slot: Int, _ bytes: [UInt8], now: Double) -> [HTTPConnectionAction] {
        guard !isClosed, let i = slots.firstIndex(where: { $0.id == slot }) else { return [] }
        slots[i].bytes = bytes
        while let first = slots.first, let ready = first.bytes {
            output += ready
            slots.removeFirst()
        }
        var actions: [HTTPConnectionAction] = [.flush]
        if slots.count < limits.maxPipelined, !input.isEmpty, !closeAfterAnswers, upgrade == nil, !framingHeldByOutput {
            actions += frame(now: now)
        }
        return actions
    }

    /// `n` bytes of `output` left (taken by the socket or by libwebsockets).
    public mutating func wrote(_ n: Int, now: Double) {
        guard n > 0 else { return }
        output.removeFirst(min(n, output.count))
        lastWriteProgress = now
        lastActivity = now
    }

    /// The transport wrote what it could; `held`: bytes still wait (in `output` or, over TLS,
    /// in libwebsockets). Once enough has left, framing held back by unsent answers goes on;
    /// once everything is out: close a finished connection, or take up an upgrade that waited
    /// for earlier answers.
    public mutating func flushed(held: Bool, now: Double) -> [HTTPConnectionAction] {
        guard !isClosed else { return [] }
        if framingHeldByOutput, output.count < limits.maxQueuedOutput {
            framingHeldByOutput = false
            return frame(now: now)
        }
        guard !held, output.isEmpty else { return [] }
        if isFinished { return close(reset: false) }
        if upgradeBehindOutput, slots.isEmpty {
            upgradeBehindOutput = false
            return frame(now: now)
        }
        return []
    }

    /// Once a second. `queuedElsewhere`: bytes of this connection waiting outside `output`
    /// (the kernel's send queue, libwebsockets' buffer), so a reader that stops reading is
    /// caught even when the whole answer fit in the socket.
    public mutating func tick(now: Double, queuedElsewhere: Int) -> [HTTPConnectionAction] {
        guard !isClosed else { return [] }
        let waiting = output.count + queuedElsewhere
        defer { lastQueued = waiting }
        if waiting > 0 {
            if waiting < lastQueued { lastWriteProgress = now }
            if now - lastWriteProgress >= limits.writeStallTimeout { return close(reset: true) }
        }
        if isIdle {
            let limit = framed == 0 ? limits.headerTimeout : limits.idleTimeout
            if now - lastActivity >= limit { return close(reset: false) }
        } else if !input.isEmpty, slots.isEmpty, !closeAfterAnswers, upgrade == nil,
                  now - requestStartedAt >= limits.headerTimeout {
            return refuse(HTTPRefusal(status: 408, .error(StaffcastError(.invalid,
                "The request did not arrive in time (\(Int(limits.headerTimeout)) s); send it whole."))))
        }
        return []
    }

    /// Graceful stop: answer what was framed with `Connection: close`, then close.
    public mutating func beginDrain() -> [HTTPConnectionAction] {
        guard !isClosed else { return [] }
        draining = true
        closeAfterAnswers = true
        return [.flush]
    }

    // MARK: the upgrade

    /// The token of the upgrade being decided was checked: `refusal` when it is not good.
    public mutating func tokenChecked(refusal: StaffcastError?) -> [HTTPConnectionAction] {
        guard !isClosed, case .checkingToken(let head)? = upgrade else { return [] }
        if let refusal { return upgradeRefused(refusal) }
        // The lookup may have taken a while: judge again what may have changed meanwhile.
        if let refusal = upgradeRefusal(head) {
            upgrade = nil
            return refuse(refusal)
        }
        upgrade = .admitting(head)
        return [.admit(head)]
    }

    /// The upgrade is refused (its token, or a connection cap): answered with the error's
    /// status, then closed.
    public mutating func upgradeRefused(_ error: StaffcastError) -> [HTTPConnectionAction] {
        guard !isClosed, upgrade != nil else { return [] }
        upgrade = nil
        return refuse(HTTPRefusal(status: error.code.httpStatus, .error(error)))
    }

    /// The upgrade is admitted: the connection leaves HTTP with what followed the upgrade
    /// request in the bytes read so far (the WebSocket's first frames, if any).
    public mutating func handOver() -> [UInt8] {
        isClosed = true
        upgrade = nil
        defer { input = [] }
        return input.count > upgradeHeadLength ? Array(input[upgradeHeadLength...]) : []
    }

    /// The transport closed the connection (or lost it): every later event is ignored.
    public mutating func closed() {
        isClosed = true
    }

    // MARK: framing

    /// Frames as many whole requests as the pipeline allows, in order.
    mutating func frame(now: Double) -> [HTTPConnectionAction] {
        var actions: [HTTPConnectionAction] = []
        framing: while slots.count < limits.maxPipelined, !closeAfterAnswers, upgrade == nil, !input.isEmpty {
            guard output.count < limits.maxQueuedOutput else {
                framingHeldByOutput = true
                break framing
            }
            let parsed = parser.parse(input)
            // Unframed bytes fill the buffer with nothing ahead of them to answer: this request
            // can never fit (a chunked body in tiny chunks: its framing outgrows the body limit).
            if input.count >= limits.maxBuffered, slots.isEmpty {
                switch parsed {
                case .needMore, .incompleteBody:
                    input = []
                    actions += refuse(HTTPRefusal(status: 413, .error(StaffcastError(.tooLarge,
                        "The request is larger than \(Self.grouped(limits.maxBuffered)) bytes as sent; send its body with Content-Length, or in larger chunks. Nothing was stored."))))
                    break framing
                default: break
                }
            }
            switch parsed {
            case .needMore:
                break framing
            case .incompleteBody(let head):
                // Only once nothing is waiting: the client may send the body as soon as it reads this.
                if head.header("expect")?.lowercased() == "100-continue", !sentContinue, slots.isEmpty {
                    sentContinue = true
                    output += Self.continueBytes
                }
                break framing
            case .failure(let e):
                input = []
                actions += refuse(HTTPRefusal(status: e.status, .framing(e)))
            case .upgrade(let head, let headLength):
                guard slots.isEmpty, output.isEmpty else {
                    upgradeBehindOutput = true // answer what came before, then take the upgrade
                    break framing
                }
                if let refusal = upgradeRefusal(head) {
                    actions += refuse(refusal)
                } else {
                    upgrade = .checkingToken(head)
                    upgradeHeadLength = headLength
                    actions.append(.checkToken(head))
                }
            case .request(let request, let consumed):
                input.removeFirst(consumed)
                sentContinue = false
                requestStartedAt = now
                let keepAlive = request.head.keepAlive && !draining
                if !keepAlive { closeAfterAnswers = true }
                actions.append(.serve(request, slot: reserveSlot(), keepAlive: keepAlive, headOnly: request.head.method == "HEAD"))
            }
        }
        if !isReadPaused, input.count >= limits.maxBuffered {
            isReadPaused = true
            actions.append(.stopReading)
        } else if isReadPaused, input.count < limits.maxBuffered {
            isReadPaused = false
            actions.append(.resumeReading)
        }
        actions.append(.flush)
        return actions
    }

    static let continueBytes = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)

    /// What refuses an upgrade before its token is looked at: the path, a draining server, size.
    func upgradeRefusal(_ head: HTTPRequestHead) -> HTTPRefusal? {
        guard head.path == limits.upgradePath else {
            return HTTPRefusal(status: 404, .error(.notFound("WebSockets connect at \(limits.upgradePath).")))
        }
        guard !draining else {
            return HTTPRefusal(status: 503, .error(.unavailable("This server is shutting down; connect again in a moment.")))
        }
        guard input.count <= limits.maxUpgradeBytes else {
            return HTTPRefusal(status: 431, .error(StaffcastError(.tooLarge,
                "The upgrade request is larger than \(Self.grouped(limits.maxUpgradeBytes)) bytes; send fewer or shorter headers.")))
        }
        return nil
    }

    /// 2048 → "2,048", as people read numbers in messages.
    static func grouped(_ n: Int) -> String {
        let digits = Array(String(n))
        var out = ""
        for (i, d) in digits.enumerated() {
            if i > 0, (digits.count - i) % 3 == 0 { out.append(",") }
            out.append(d)
        }
        return out
    }

    mutating func reserveSlot() -> Int {
        defer { framed += 1 }
        slots.append((framed, nil))
        return framed
    }

    /// Answers with `refusal` after what is already waiting, and closes once it is out.
    mutating func refuse(_ refusal: HTTPRefusal) -> [HTTPConnectionAction] {
        closeAfterAnswers = true
        return [.refuse(slot: reserveSlot(), refusal)]
    }

    mutating func close(reset: Bool) -> [HTTPConnectionAction] {
        isClosed = true
        return [.close(reset: reset)]
    }
}
