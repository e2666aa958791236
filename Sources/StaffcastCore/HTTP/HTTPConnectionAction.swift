/// What `HTTPConnectionMachine` asks of its transport. The transport carries each out in
/// order and reports back with the machine's events (`answered`, `wrote`, `flushed`,
/// `tokenChecked`, `upgradeRefused`, `handOver`).
public enum HTTPConnectionAction: Sendable, Equatable {
    /// Serve a request; its answer (serialized with `keepAlive`, without a body when
    /// `headOnly`) goes into `slot` through `answered`, in any order: answers leave in
    /// request order.
    case serve(HTTPRequest, slot: Int, keepAlive: Bool, headOnly: Bool)
    /// Answer `slot` with this refusal (`Connection: close`) through `answered`; the
    /// connection closes once it is out.
    case refuse(slot: Int, HTTPRefusal)
    /// A WebSocket upgrade passed the checks the machine can make: check its token (maybe
    /// off the loop), then report `tokenChecked`. Nothing more is framed meanwhile.
    case checkToken(HTTPRequestHead)
    /// The token is good: admit the upgrade (the connection caps), then take the connection
    /// with `handOver`, or report `upgradeRefused`.
    case admit(HTTPRequestHead)
    /// Write what `output` holds as far as the socket takes it (`wrote`), then report
    /// `flushed`.
    case flush
    /// Read no further (too much is buffered and unframed) until `resumeReading`.
    case stopReading
    case resumeReading
    /// Close the connection: gracefully, or with a TCP reset that frees its buffers at once.
    case close(reset: Bool)
}

/// Why a request is answered with an error and the connection closed.
public struct HTTPRefusal: Sendable, Equatable {
    public enum Reason: Sendable, Equatable {
        /// The bytes could not be framed as HTTP.
        case framing(HTTPParseError)
        case error(StaffcastError)
    }

    public var status: Int
    public var reason: Reason

    public init(status: Int, _ reason: Reason) {
        self.status = status
        self.reason = reason
    }
}
