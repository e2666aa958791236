import Foundation

/// One decoded client frame: what is asked, plus the optional `ref` to echo in the reply.
public struct ClientFrame: Sendable, Equatable {
    public var ref: String?
    public var request: ClientRequest

    public init(ref: String?, request: ClientRequest) {
        self.ref = ref
        self.request = request
    }
}

/// The client ops of protocol v1 (docs/protocol.md), already validated.
public enum ClientRequest: Sendable, Equatable {
    case subscribe(eventID: UUID, sinceSeq: Int64?)
    case unsubscribe(eventID: UUID)
    case send(SendRequest)
    case markRead(messageID: UUID)
    /// Mark every message of the event up to `throughSeq` read (the newest when nil), in one
    /// request; emergency and urgent ones are left for their own `mark_read` (an
    /// acknowledgement is deliberate).
    case markAllRead(eventID: UUID, throughSeq: Int64?)
    case markNotificationRead(notificationID: UUID)
    /// `afterSeq`: the page of unexpired messages after it, oldest first (catch-up paging);
    /// otherwise the page before `beforeSeq` (or the newest).
    case history(eventID: UUID, beforeSeq: Int64?, afterSeq: Int64? = nil, limit: Int)
    case listEvents
    case ping
    /// Correct a message's text (its sender, or an admin or owner of its event); validated.
    case edit(messageID: UUID, message: String)
    /// Take a message back: it leaves history, catch-up and unread counts.
    case retract(messageID: UUID)
    /// A staff member's answer to a message: a status and, for `custom`, a short text.
    case reply(ReplyRequest)
    /// An answer to a poll: the 0-based option (docs/protocol.md, Polls).
    case answer(messageID: UUID, option: Int)

    public var op: String {
        switch self {
        case .subscribe: return "subscribe"
        case .unsubscribe: return "unsubscribe"
        case .send: return "send"
        case .markRead: return "mark_read"
        case .markAllRead: return "mark_all_read"
        case .markNotificationRead: return "mark_notification_read"
        case .history: return "history"
        case .listEvents: return "list_events"
        case .ping: return "ping"
        case .edit: return "edit"
        case .retract: return "retract"
        case .reply: return "reply"
        case .answer: return "answer"
        }
    }
}

/// A frame that could not be decoded: the error to send back, with the `ref` if one was readable.
public struct ClientFrameError: Error, Sendable, Equatable {
    public var ref: String?
    public var error: StaffcastError
}
