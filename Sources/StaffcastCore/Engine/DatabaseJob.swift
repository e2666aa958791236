import Foundation

/// A request that needs the database, as the engine hands it out (`EngineAction.run`).
/// The runner executes it as `identity`, encodes the reply off the service loop, and reports
/// back with `FanoutEngine.jobCompleted(connection:ref:outcome:)`.
public struct DatabaseJob: Sendable {
    public enum Request: Sendable, Equatable {
        /// `generation` lets the engine ignore an answer overtaken by an unsubscribe.
        case subscribe(eventID: UUID, sinceSeq: Int64?, generation: Int)
        /// Any other op that needs the database, as the client asked it (never `subscribe`,
        /// `unsubscribe` or `ping`: the engine answers those itself or as above).
        case client(ClientRequest)

        /// The protocol op, for logs.
        public var op: String {
            switch self {
            case .subscribe: return "subscribe"
            case .client(let request): return request.op
            }
        }
    }

    public var connection: Int
    public var ref: String?
    public var identity: Identity
    public var request: Request

    public init(connection: Int, ref: String?, identity: Identity, request: Request) {
        self.connection = connection
        self.ref = ref
        self.identity = identity
        self.request = request
    }
}

/// How a `DatabaseJob` ended, with its reply already encoded.
public enum JobOutcome<Frame: WireFrame>: Sendable {
    /// Queue this reply frame.
    case reply(Frame)
    /// A subscribe's snapshot: `historyThrough` is the highest message seq it could see,
    /// `accessThrough` the highest access-change seq, `changesThrough` the highest edit or
    /// retract (`message_changes`) seq, `level` the user's level on the event
    /// (admins and owners get `receipt` frames), `followUps` frames queued just before the reply
    /// (edits and retracts of older messages a reconnecting client missed).
    case subscribed(eventID: UUID, generation: Int, reply: Frame, historyThrough: Int64, accessThrough: Int64,
                    changesThrough: Int64, level: AccessLevel? = nil, followUps: [Frame] = [])
    /// Refused or failed; the engine sends an `error` frame with the request's ref.
    case failed(StaffcastError)
}
