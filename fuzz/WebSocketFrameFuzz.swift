// libFuzzer target: RFC 6455 framing as the server reads it over TLS (WebSocketFrameReader,
// UTF8Validator). Built by scripts/fuzz.sh together with those StaffcastCore sources into one
// module, so no `import StaffcastCore`.
//
// Each input is what one wss client sent. The first byte picks where to cut it into two reads;
// the rest is read whole, cut there, and one byte at a time. Besides "never traps", it checks
// the reader's promises: the three readings give the same events (data chunks joined per
// message); no data chunk, control payload or event count exceeds the bytes read; a failure
// carries 1002 or 1007 and is the last event; nothing follows a close or a failure; every text
// message that ends is UTF-8; control payloads are at most 125 bytes.

@_cdecl("LLVMFuzzerTestOneInput")
public func staffcastFuzzWebSocketFrames(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard size > 0, let data else { return 0 }
    let cut = Int(data[0])
    let bytes = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))

    var whole = WebSocketFrameReader()
    let once = whole.read(bytes)
    fuzzCheckEvents(once, of: bytes.count)

    var split = WebSocketFrameReader()
    let at = min(cut, bytes.count)
    let twice = split.read(Array(bytes[..<at])) + split.read(Array(bytes[at...]))
    fuzzRequire(fuzzJoined(twice) == fuzzJoined(once), "a cut at \(at) changed the events")
    fuzzRequire(split.isFinished == whole.isFinished, "a cut changed whether the reader finished")

    if bytes.count <= 512 {
        var single = WebSocketFrameReader()
        let trickled = bytes.flatMap { single.read([$0]) }
        fuzzRequire(fuzzJoined(trickled) == fuzzJoined(once), "byte by byte changed the events")
    }
    return 0
}

func fuzzCheckEvents(_ events: [WebSocketFrameReader.Event], of count: Int) {
    fuzzRequire(events.count <= count, "\(events.count) events from \(count) bytes")
    for (i, event) in events.enumerated() {
        switch event {
        case .data(let payload, _, _):
            fuzzRequire(payload.count <= count, "a data chunk longer than the input")
        case .ping(let payload), .pong(let payload):
            fuzzRequire(payload.count <= WebSocketFrameReader.maxControlPayload, "a control payload over 125 bytes")
        case .close(let code, let reason):
            fuzzRequire(i == events.count - 1, "an event after the close")
            fuzzRequire(code.map(WebSocketFrameReader.isValidCloseCode) ?? true, "close code \(code ?? 0) passed")
            fuzzRequire(reason.utf8.count <= 123, "a close reason over 123 bytes")
        case .failure(let code, let reason):
            fuzzRequire(i == events.count - 1, "an event after a failure")
            fuzzRequire(code == 1002 || code == 1007, "failure code \(code)")
            fuzzRequire(!reason.isEmpty, "a failure without a reason")
        }
    }
    // Every text message that ends is UTF-8 (checked again here, from the joined bytes).
    for case .data(let payload, true, false) in fuzzJoined(events) {
        var check = UTF8Validator()
        fuzzRequire(check.feed(payload) && check.isComplete, "a text message that is not UTF-8 got through")
    }
}

/// Data chunks of one message joined into one final `.data`.
func fuzzJoined(_ events: [WebSocketFrameReader.Event]) -> [WebSocketFrameReader.Event] {
    var out: [WebSocketFrameReader.Event] = []
    var pending: [UInt8] = []
    var pendingBinary = false
    for event in events {
        if case .data(let bytes, let final, let binary) = event {
            pending += bytes
            pendingBinary = binary
            if final {
                out.append(.data(pending, final: true, binary: binary))
                pending = []
            }
        } else {
            // Chunks of a message the failure cut short: how many went out first depends on the
            // cuts (the reader streams), and none of them ends a message.
            if case .failure = event { pending = [] }
            out.append(event)
        }
    }
    // A message still open at the end: kept as an unfinished chunk, so the readings compare.
    if !pending.isEmpty { out.append(.data(pending, final: false, binary: pendingBinary)) }
    return out
}

func fuzzRequire(_ condition: Bool, _ what: @autoclosure () -> String) {
    if !condition { fatalError("fuzz invariant broken: \(what())") }
}
