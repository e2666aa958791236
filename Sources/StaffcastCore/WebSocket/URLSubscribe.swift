import Foundation

/// A subscribe carried by the upgrade's URL: `/v1/ws?subscribe=EVENT_ID` (optionally with
/// `since_seq=N` and `ref=R`). The server subscribes as the WebSocket opens, exactly as if the
/// client's first frame had been `{"op":"subscribe","event_id":…,"since_seq":…,"ref":…}`, and
/// holds `hello` back until the answer is ready (for at most `EngineConfiguration.urlSubscribeHold`
/// seconds, ended on the tick after it), so the `101`, `hello` and `subscribed` leave in one write.
///
/// Why: a reconnecting phone or scanner then needs one round trip instead of two, and a
/// reconnect storm costs the server one send and one read per connection fewer (nchan takes
/// its channel from the URL for the same reason). Pure: no I/O, safe on any thread.
public struct URLSubscribe: Sendable, Equatable {
    public var eventID: UUID
    public var sinceSeq: Int64?
    public var ref: String?

    public init(eventID: UUID, sinceSeq: Int64? = nil, ref: String? = nil) {
        self.eventID = eventID
        self.sinceSeq = sinceSeq
        self.ref = ref
    }

    /// The query parameter that asks for it.
    public static let parameter = "subscribe"

    /// What the upgrade's query asks: nil when it names no event; a failure (answered with
    /// 400 instead of the upgrade, once the caller is admitted) when it names one wrongly.
    public static func parse(_ query: [String: String]) -> Result<URLSubscribe?, StaffcastError> {
        guard let raw = query[parameter] else {
            if query["since_seq"] != nil {
                return .failure(.invalid("since_seq in the WebSocket URL goes with subscribe=EVENT_ID; add it, or send since_seq in the subscribe frame."))
            }
            return .success(nil)
        }
        guard let event = UUID(wireText: raw) else {
            return .failure(.invalid("subscribe '\(raw.prefix(64))' in the WebSocket URL is not an event id (a UUID)."))
        }
        let sinceSeq: Int64?
        do { sinceSeq = try QueryNumber.read(query, "since_seq", 0...Int64.max) } catch { return .failure(error) }
        return .success(URLSubscribe(eventID: event, sinceSeq: sinceSeq, ref: query["ref"]))
    }

    /// The client frame it stands for.
    public var frame: ClientFrame {
        ClientFrame(ref: ref, request: .subscribe(eventID: eventID, sinceSeq: sinceSeq))
    }
}
