import Foundation
import StaffcastCore

/// A subscriber that never silently misses a message: it connects subscribing to one event
/// with `since_seq` (from memory, else from disk) in the upgrade's URL, reconnects with backoff
/// and jitter (1 s doubling up to 30 s), and drops any message it has already shown (by seq).
///
/// Single-threaded: `run` owns the socket and calls `onUpdate` on the caller's thread; between
/// reads it calls `poll`, which may return frames to send (mark read, ping, …).
public final class SubscriberSession {
    public enum Update {
        case connecting(attempt: Int)
        case connected(Identity)
        /// `history` is what the server sent; `fresh` the part newer than what was shown before.
        case subscribed(EventSummary, history: [StaffMessage], fresh: [StaffMessage], unreadCount: Int)
        case message(StaffMessage)
        case frame(ServerFrame)
        case disconnected(reason: String, retryIn: TimeInterval)
        /// The session ended for good; `notAllowed` when retrying cannot help because the token
        /// or the access is wrong (a refused token, an event one cannot see): exit status 2.
        case fatal(String, notAllowed: Bool)
    }

    public let webSocketURL: String
    public let token: String
    /// How `wss://` servers are trusted (`--ca-file`).
    public let trust: TLSTrust
    public private(set) var eventID: UUID
    private let cursors: CursorStore?
    public private(set) var lastSeq: Int64?
    /// Why the session ended for good (a refused subscribe); set by `handle`, read by `run`.
    private var failed: (reason: String, notAllowed: Bool)?
    /// A subscribe the server could not answer now: reconnect (with backoff) and subscribe again.
    private var retry: String?
    private var socket: WebSocketClient?
    private var outgoing: [String] = []
    private var nextRef = 1
    private var contextRequested: Set<UUID> = []
    /// Paging through a long catch-up (`subscribed` said `more`): the ref of the page asked
    /// for, and live messages held back until the pages reach them, so that they are shown in
    /// order, once each.
    private var catchUp: (ref: String, held: [StaffMessage])?
    /// The ref of the subscribe in flight: its refusal ends the session (a wrong or forbidden
    /// event cannot get better by retrying), its `unavailable` is retried.
    private var subscribeRef: String?

    public init(webSocketURL: String, token: String, eventID: UUID, cursors: CursorStore?, trust: TLSTrust = TLSTrust()) {
        self.webSocketURL = webSocketURL
        self.token = token
        self.trust = trust
        self.eventID = eventID
        self.cursors = cursors
        self.lastSeq = cursors?.load(eventID.uuidString.lowercased())
    }

    /// Moves to another event: unsubscribes, and subscribes there from its remembered seq.
    public func switchEvent(to event: UUID) {
        enqueue(.unsubscribe(eventID: eventID))
        eventID = event
        lastSeq = cursors?.load(event.uuidString.lowercased())
        enqueueSubscribe()
    }

    /// Queues a subscribe frame to the current event from `lastSeq` (another event on the open
    /// connection), ahead of anything else queued (marks made meanwhile follow it).
    private func enqueueSubscribe() {
        subscribeRef = enqueue(.subscribe(eventID: eventID, sinceSeq: lastSeq))
        if let text = outgoing.popLast() { outgoing.insert(text, at: 0) }
    }

    /// The URL of a (re)connect: the subscribe to the current event from `lastSeq` rides in it
    /// (`URLSubscribe`), so the server answers `hello` and `subscribed` together: one round trip
    /// instead of two. Frames queued while offline (marks) follow it, as they followed the frame.
    private func subscribingURL() -> String {
        let ref = takeRef()
        subscribeRef = ref
        let url = URLSubscribe(eventID: eventID, sinceSeq: lastSeq, ref: ref).url(webSocketURL)
        // A server URL the subscribe could not be added to: the frame, as before.
        if url == webSocketURL { enqueueSubscribe() }
        return url
    }

    private func takeRef() -> String {
        defer { nextRef += 1 }
        return "c\(nextRef)"
    }

    /// Queues a client frame to send; returns its ref.
    @discardableResult
    public func enqueue(_ request: ClientRequest) -> String {
        let ref = takeRef()
        if let data = WireJSON.encode(ClientFrame(ref: ref, request: request)) {
            outgoing.append(String(decoding: data, as: UTF8.self))
        }
        return ref
    }

    /// Runs until `shouldStop` returns true. `tick` is called at least every `tickInterval`.
    public func run(tickInterval: TimeInterval = 0.25, shouldStop: () -> Bool, tick: () -> Void,
                    onUpdate: (Update) -> Void) {
        var attempt = 0
        while !shouldStop() {
            attempt += 1
            onUpdate(.connecting(attempt: attempt))
            do {
                let ws = try WebSocketClient(url: subscribingURL(), headers: ["Authorization": "Bearer \(token)"], trust: trust)
                socket = ws
                while !shouldStop() && failed == nil {
                    if let why = retry {
                        retry = nil
                        throw ClientError.server(code: "unavailable", message: why, status: 0)
                    }
                    for text in outgoing { try ws.send(text: text) }
                    outgoing.removeAll()
                    tick()
                    guard let event = try ws.receive(timeout: tickInterval) else { continue }
                    switch event {
                    case .text(let text):
                        guard let frame = try? ServerFrame.decode(Array(text.utf8)) else { continue }
                        if case .subscribed = frame { attempt = 0 }
                        handle(frame, onUpdate)
                    case .binary:
                        continue
                    case .close(let code, let reason):
                        throw ClientError.closed(code: code, reason: reason)
                    }
                }
                ws.close(code: 1000)
                if let failed { onUpdate(.fatal(failed.reason, notAllowed: failed.notAllowed)) }
                return
            } catch let error as ClientError {
                socket = nil
                if case .handshake(let status, let body) = error, status == 401 || status == 403 {
                    onUpdate(.fatal(body.isEmpty ? "the server refused the token (HTTP \(status))" : Self.message(body), notAllowed: true))
                    return
                }
                if case .tls = error {
                    // An untrusted certificate or an unreadable CA file: retrying cannot help.
                    onUpdate(.fatal(error.description, notAllowed: false))
                    return
                }
                let delay = Self.backoff(attempt: attempt)
                onUpdate(.disconnected(reason: error.description, retryIn: delay))
                let until = Date().addingTimeInterval(delay)
                while Date() < until && !shouldStop() {
                    tick()
                    usleep(UInt32(min(tickInterval, max(0.01, until.timeIntervalSinceNow)) * 1_000_000))
                }
            } catch {
                onUpdate(.fatal("\(error)", notAllowed: false))
                return
            }
        }
    }

    private func handle(_ frame: ServerFrame, _ onUpdate: (Update) -> Void) {
        switch frame {
        case .hello(let user, _, _, let features):
            // An older server ignored the subscribe in the URL: subscribe with a frame.
            if !features.contains("subscribe_in_url") { enqueueSubscribe() }
            onUpdate(.connected(user))
        case .subscribed(_, let event, let history, let unread, let more):
            // An answer for the event before a switch (already on its way): not this event's.
            guard event.id == eventID else { return }
            subscribeRef = nil
            let fresh = history.filter { lastSeq == nil || $0.seq > lastSeq! }
            if let lastSeq, !contextRequested.contains(event.id) {
                // Caught up with since_seq: also fetch what came before, for context on screen.
                contextRequested.insert(event.id)
                enqueue(.history(eventID: event.id, beforeSeq: lastSeq + 1, limit: Limits.subscribeHistory))
            }
            onUpdate(.subscribed(event, history: history, fresh: fresh, unreadCount: unread))
            if let last = history.map(\.seq).max() { remember(last) }
            catchUp = nil
            if more, let lastSeq { requestCatchUpPage(after: lastSeq) }
        case .history(let ref?, let event, let messages, let more) where ref == catchUp?.ref && event == eventID:
            for m in messages where lastSeq == nil || m.seq > lastSeq! {
                remember(m.seq)
                onUpdate(.message(m))
            }
            if more, let lastSeq {
                requestCatchUpPage(after: lastSeq)
            } else {
                let held = catchUp?.held ?? []
                catchUp = nil
                for m in held.sorted(by: { $0.seq < $1.seq }) where lastSeq == nil || m.seq > lastSeq! {
                    remember(m.seq)
                    onUpdate(.message(m))
                }
            }
        case .message(let m) where m.eventID == eventID && catchUp != nil:
            catchUp?.held.append(m) // shown once the pages before it are
        case .message(let m) where m.eventID == eventID:
            if let lastSeq, m.seq <= lastSeq { return } // already shown: no duplicates across reconnects
            remember(m.seq)
            onUpdate(.message(m))
        case .error(let ref?, let e) where ref == subscribeRef:
            onUpdate(.frame(frame))
            if e.code == .unavailable || e.code == .rateLimited || e.code == .internal {
                retry = e.message // busy, or asked to subscribe again: reconnect after the backoff
            } else {
                // not_found, forbidden, invalid: retrying cannot help.
                failed = ("cannot watch event \(eventID.uuidString.lowercased()): \(e.message)",
                          e.code == .notFound || e.code == .forbidden || e.code == .unauthorized)
            }
        default:
            onUpdate(.frame(frame))
        }
    }

    private func requestCatchUpPage(after seq: Int64) {
        let ref = enqueue(.history(eventID: eventID, beforeSeq: nil, afterSeq: seq, limit: Limits.maxHistoryLimit))
        catchUp = (ref, catchUp?.held ?? [])
    }

    private func remember(_ seq: Int64) {
        if lastSeq == nil || seq > lastSeq! {
            lastSeq = seq
            cursors?.save(eventID.uuidString.lowercased(), seq)
        }
    }

    /// 1 s, 2 s, 4 s … up to 30 s, each with up to 30 % random jitter so a crowd of clients
    /// does not reconnect in step after a server restart.
    public static func backoff(attempt: Int) -> TimeInterval {
        let base = min(30, pow(2, Double(max(0, attempt - 1))))
        return min(30, base * (1 + Double.random(in: 0...0.3)))
    }

    private static func message(_ body: String) -> String {
        ErrorBody.decode(Data(body.utf8))?.message ?? body
    }
}
