/// An encoded server frame, ready for the wire: made once (off the service loop where it can
/// be) and then shared, unchanged, by every connection that gets it.
///
/// The engine never looks inside a frame; it only counts its bytes against a connection's
/// queue. The transport decides the representation (the server's `OutFrame` holds the whole
/// WebSocket frame, header included, so one message is one buffer for all its subscribers).
public protocol WireFrame: AnyObject, Sendable {
    /// A text frame carrying `payload` (one JSON object).
    init(text payload: [UInt8])
    /// Bytes this frame takes on the wire.
    var wireLength: Int { get }
}
