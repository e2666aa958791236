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

    /// The query items that ask for it: the client's side of `parse` (`staffcast watch`),
    /// so both sides spell the parameters in one place.
    public var queryItems: [URLQueryItem] {
        var items = [URLQueryItem(name: Self.parameter, value: eventID.wireText)]
        if let sinceSeq { items.append(URLQueryItem(name: "since_seq", value: String(sinceSeq))) }
        if let ref { items.append(URLQueryItem(name: "ref", value: ref)) }
        return items
    }

    /// `url` (a WebSocket URL) asking for it, after any query `url` has already. Values are
    /// percent-encoded but for RFC 3986's unreserved characters (`queryItems` alone would leave
    /// a `+` in a ref, which a server may read as a space).
    public func url(_ url: String) -> String {
        guard var components = URLComponents(string: url) else { return url }
        let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
        let encoded = queryItems.map {
            URLQueryItem(name: $0.name, value: $0.value?.addingPercentEncoding(withAllowedCharacters: unreserved))
        }
        components.percentEncodedQueryItems = (components.percentEncodedQueryItems ?? []) + encoded
        return components.string ?? url
    }

    /// The client frame it stands for.
    public var frame: ClientFrame {
        ClientFrame(ref: ref, request: .subscribe(eventID: eventID, sinceSeq: sinceSeq))
    }
}
