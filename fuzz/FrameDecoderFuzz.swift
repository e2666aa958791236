// libFuzzer target: the WebSocket client-frame decoder (ClientFrameDecoder, and through it
// WireFields, SendRequest, ReplyRequest, Team, Poll and TextRules). Built by scripts/fuzz.sh together with the sources of
// StaffcastCore into one module, so no `import StaffcastCore`.
//
// Every input is decoded as one client text frame. Besides "never traps", it checks what a
// decoded frame promises to the engine: a `send` satisfies every message rule, a `history`
// page size is in range, an error carries a code and a sentence. The same bytes, read as UTF-8,
// are also given to SendRequest and TextRules directly (a JSON frame rarely carries odd text).
import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func staffcastFuzzFrameDecoder(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = size == 0 ? [] : Array(UnsafeBufferPointer(start: data, count: size))

    switch ClientFrameDecoder.decode(bytes) {
    case .success(let frame):
        switch frame.request {
        case .send(let send):
            fuzzCheckStorableMessage(send)
            fuzzRequire(send.teams.count <= SendRequest.maxTeams && Set(send.teams).count == send.teams.count,
                        "too many or repeated teams accepted")
            for team in send.teams { fuzzRequire((try? Team.validateName(team)) != nil, "an invalid team name accepted") }
            if let poll = send.poll {
                fuzzRequire((2...6).contains(poll.options.count), "a poll of \(poll.options.count) options accepted")
                fuzzRequire(poll.options.allSatisfy { TextRules.forbiddenControlCharacter(in: $0) == nil },
                            "control character in a poll option accepted")
            }
        case .answer(_, let option):
            fuzzRequire((0...5).contains(option), "answer option \(option) out of range")
        case .history(_, let before, let after, let limit):
            fuzzRequire((1...Limits.maxHistoryLimit).contains(limit), "history limit \(limit) out of range")
            fuzzRequire(before == nil || after == nil, "history with both before_seq and after_seq")
            fuzzRequire((before ?? 1) >= 1 && (after ?? 0) >= 0, "history sequence below its minimum")
        case .subscribe(_, let since):
            fuzzRequire((since ?? 0) >= 0, "negative since_seq")
        case .edit(_, let message):
            fuzzRequire(!message.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty, "empty edit accepted")
            fuzzRequire(message.utf8.count <= Limits.maxMessageBytes, "edit over \(Limits.maxMessageBytes) bytes accepted")
            fuzzRequire(TextRules.forbiddenControlCharacter(in: message) == nil, "control character in an edit accepted")
        case .reply(let reply):
            if let text = reply.text {
                fuzzRequire(text.utf8.count <= ReplyRequest.maxTextBytes, "reply text over \(ReplyRequest.maxTextBytes) bytes accepted")
                fuzzRequire(TextRules.forbiddenControlCharacter(in: text) == nil, "control character in a reply accepted")
            }
            fuzzRequire(reply.status != .custom || !(reply.text ?? "").isEmpty, "custom reply without text accepted")
        case .unsubscribe, .markRead, .markAllRead, .markNotificationRead, .listEvents, .ping, .retract:
            break
        }
        fuzzRequire(!frame.request.op.isEmpty, "empty op")
    case .failure(let e):
        fuzzRequire(e.error.code == .invalid || e.error.code == .tooLarge, "unexpected error code \(e.error.code)")
        fuzzRequire(!e.error.message.isEmpty, "error without a sentence")
    }

    // The bytes as message text, straight into the validation a send goes through.
    let text = String(decoding: bytes, as: UTF8.self)
    _ = TextRules.forbiddenControlCharacter(in: text)
    let types: [String?] = [nil, "broadcast", "alert", "emergency", "ALERT", ""]
    let priorities: [String?] = [nil, "low", "normal", "high", "urgent", "Urgent"]
    let minutes: [Int?] = [nil, 0, 1, 43_200, 43_201, Int.min, Int.max]
    let pick = bytes.first.map(Int.init) ?? 0
    if let send = try? SendRequest(eventID: UUID(), message: text,
                                   messageType: types[pick % types.count],
                                   priority: priorities[(pick / types.count) % priorities.count],
                                   expiresInMinutes: minutes[(pick / 7) % minutes.count]) {
        fuzzCheckStorableMessage(send)
    }
    return 0
}

/// What a `SendRequest` value guarantees (its construction is the validation).
func fuzzCheckStorableMessage(_ send: SendRequest) {
    fuzzRequire(!send.message.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty, "empty message accepted")
    fuzzRequire(send.message.utf8.count <= Limits.maxMessageBytes, "message over \(Limits.maxMessageBytes) bytes accepted")
    fuzzRequire(TextRules.forbiddenControlCharacter(in: send.message) == nil, "control character accepted")
    fuzzRequire(!send.message.unicodeScalars.contains("\u{0}"), "NUL accepted")
    if let m = send.expiresInMinutes {
        fuzzRequire(Limits.expiresInMinutes.contains(m), "expires_in_minutes \(m) accepted")
    }
}

/// A broken promise is a crash: libFuzzer keeps the input and prints the stack.
func fuzzRequire(_ condition: Bool, _ what: @autoclosure () -> String) {
    if !condition { fatalError("fuzz invariant broken: \(what())") }
}
