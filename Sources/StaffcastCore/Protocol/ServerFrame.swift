import Foundation

/// The server ops of protocol v1 (docs/protocol.md), plus `events` (reply to `list_events`).
/// `encoded()` produces the exact bytes of one text frame; the server encodes a live message
/// once and writes those same bytes to every subscriber.
public enum ServerFrame: Sendable, Equatable {
    /// `features`: what this server does beyond protocol v1's frames (`subscribe_in_url`: it
    /// took a subscribe in the upgrade's URL), so a client can tell an older server that
    /// ignored one and subscribe with a frame instead.
    case hello(user: Identity, serverTime: Date, node: String, features: [String] = ["subscribe_in_url"])
    case subscribed(ref: String?, event: EventSummary, history: [StaffMessage], unreadCount: Int, more: Bool = false)
    case unsubscribed(ref: String?, eventID: UUID)
    case message(StaffMessage)
    case sent(ref: String?, message: StaffMessage)
    /// The answer to a send with `send_at` or `before_start`: stored, to be sent at its time.
    case scheduled(ref: String?, scheduled: ScheduledMessage)
    /// A message's text was corrected: live to subscribers, and the reply to `edit`.
    case messageUpdated(ref: String?, message: StaffMessage)
    /// A message was retracted: live to subscribers, and the reply to `retract`.
    case messageRetracted(ref: String?, messageID: UUID, eventID: UUID)
    /// The replier's acknowledgement, after the reply is committed.
    case replied(ref: String?, reply: Reply)
    /// A reply, live to the event's subscribed admins and owners.
    case reply(Reply)
    /// `countedThroughSeq`: the highest seq of the event the count's snapshot could see; a
    /// client adds the unread messages it holds beyond it (`CountedUnread`). Nil: not sent.
    case read(ref: String?, messageID: UUID, eventID: UUID, unreadCount: Int, countedThroughSeq: Int64? = nil)
    /// The reply to `mark_all_read` (op `read` without `message_id`): `marked` messages up to
    /// `throughSeq` became read; `unreadCount` is what remains (emergency and urgent ones).
    case readAll(ref: String?, eventID: UUID, throughSeq: Int64, marked: Int, unreadCount: Int, countedThroughSeq: Int64? = nil)
    case history(ref: String?, eventID: UUID, messages: [StaffMessage], more: Bool = false)
    case notification(StaffNotification)
    case notificationRead(ref: String?, notificationID: UUID)
    case accessRevoked(eventID: UUID)
    /// Someone read a message of the event (to its admins and owners).
    case receipt(ReadReceipt)
    /// The user read these messages of the event, on this device or another (to all their
    /// connections subscribed to it): each is read now, whatever this device knew.
    case markedRead(eventID: UUID, messageIDs: [UUID])
    /// A message the user has not read, again (escalation round `round`, from 1).
    case reminder(message: StaffMessage, round: Int)
    case events(ref: String?, events: [EventSummary])
    case pong(ref: String?)
    /// The answerer's acknowledgement, after the answer is committed.
    case answered(ref: String?, messageID: UUID, option: Int)
    /// A poll's count after answers, to the event's subscribed admins and owners.
    case pollTally(PollTally)
    case error(ref: String?, StaffcastError)

    public var op: String {
        switch self {
        case .hello: return "hello"
        case .subscribed: return "subscribed"
        case .unsubscribed: return "unsubscribed"
        case .message: return "message"
        case .sent: return "sent"
        case .scheduled: return "scheduled"
        case .messageUpdated: return "message_updated"
        case .messageRetracted: return "message_retracted"
        case .replied: return "replied"
        case .reply: return "reply"
        case .read, .readAll: return "read"
        case .history: return "history"
        case .notification: return "notification"
        case .notificationRead: return "notification_read"
        case .accessRevoked: return "access_revoked"
        case .receipt: return "receipt"
        case .markedRead: return "marked_read"
        case .reminder: return "reminder"
        case .events: return "events"
        case .pong: return "pong"
        case .answered: return "answered"
        case .pollTally: return "poll_tally"
        case .error: return "error"
        }
    }

    public var ref: String? {
        switch self {
        case .subscribed(let ref, _, _, _, _), .unsubscribed(let ref, _), .sent(let ref, _), .scheduled(let ref, _), .messageUpdated(let ref, _), .messageRetracted(let ref, _, _), .replied(let ref, _), .read(let ref, _, _, _, _), .readAll(let ref, _, _, _, _, _),
             .history(let ref, _, _, _), .notificationRead(let ref, _), .events(let ref, _), .pong(let ref),
             .error(let ref, _), .answered(let ref, _, _):
            return ref
        case .hello, .message, .notification, .accessRevoked, .reply, .receipt, .markedRead, .reminder, .pollTally:
            return nil
        }
    }

    /// The UTF-8 JSON text of the frame. The frames of every send (`sent` to its sender,
    /// `message` to every subscriber) are written straight into bytes (`StaffMessage+JSONBytes`).
    public func encoded() -> [UInt8] {
        switch self {
        case .message(let m): return Self.messageFrame(Self.messageOp, ref: nil, m)
        case .sent(let ref, let m): return Self.messageFrame(Self.sentOp, ref: ref, m)
        // Every WebSocket gets a hello, so a reconnect storm encodes ten thousand: written
        // straight into bytes (JSONEncoder and its date style were 7 % of a storm's server CPU).
        case .hello(let user, let serverTime, let node, let features): return Self.helloBytes(user, serverTime, node, features)
        default: break
        }
        do {
            return Array(try JSONEncoder().encode(self))
        } catch {
            // Only reachable if a model's Encodable conformance throws, which none of ours do.
            return Array(#"{"op":"error","code":"internal","message":"The server could not encode a reply."}"#.utf8)
        }
    }

    private static let messageOp = Array(#"{"op":"message""#.utf8)
    private static let sentOp = Array(#"{"op":"sent""#.utf8)

    private static func messageFrame(_ op: [UInt8], ref: String?, _ m: StaffMessage) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(420 + m.message.utf8.count)
        out += op
        if let ref {
            out += Array(#","ref":"#.utf8)
            JSONBytes.appendString(ref, to: &out)
        }
        out += Array(#","message":"#.utf8)
        m.appendJSON(to: &out)
        out.append(UInt8(ascii: "}"))
        return out
    }

    /// `hello` as `encode(to:)` writes it (the same keys and values).
    static func helloBytes(_ user: Identity, _ serverTime: Date, _ node: String, _ features: [String]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(160 + user.displayName.utf8.count + node.utf8.count)
        out += #"{"op":"hello","user_id":"#.utf8
        JSONBytes.appendUUID(user.userID, to: &out)
        out += #","display_name":"#.utf8
        JSONBytes.appendString(user.displayName, to: &out)
        out += #","server_time":"#.utf8
        JSONBytes.appendRFC3339(serverTime, to: &out)
        out += #","node":"#.utf8
        JSONBytes.appendString(node, to: &out)
        out += #","protocol":1,"features":["#.utf8
        for (i, feature) in features.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            JSONBytes.appendString(feature, to: &out)
        }
        out += "]}".utf8
        return out
    }

    public static func decode(_ bytes: [UInt8]) throws -> ServerFrame {
        try JSONDecoder().decode(ServerFrame.self, from: Data(bytes))
    }
}

extension ServerFrame: Codable {
    typealias Key = WireKey

    private static func id(_ u: UUID) -> String { u.wireText }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: Key.self)
        try c.encode(op, forKey: Key("op"))
        if let ref { try c.encode(ref, forKey: Key("ref")) }
        switch self {
        case .hello(let user, let serverTime, let node, let features):
            try c.encode(Self.id(user.userID), forKey: Key("user_id"))
            try c.encode(user.displayName, forKey: Key("display_name"))
            try c.encode(RFC3339.format(serverTime), forKey: Key("server_time"))
            try c.encode(node, forKey: Key("node"))
            try c.encode(1, forKey: Key("protocol"))
            try c.encode(features, forKey: Key("features"))
        case .subscribed(_, let event, let history, let unread, let more):
            try c.encode(Self.id(event.id), forKey: Key("event_id"))
            try c.encode(event.name, forKey: Key("event_name"))
            try c.encode(event.accessLevel, forKey: Key("access_level"))
            try c.encode(history, forKey: Key("history"))
            try c.encode(unread, forKey: Key("unread_count"))
            try c.encode(more, forKey: Key("more"))
        case .unsubscribed(_, let eventID), .accessRevoked(let eventID):
            try c.encode(Self.id(eventID), forKey: Key("event_id"))
        case .message(let m), .sent(_, let m):
            try c.encode(m, forKey: Key("message"))
        case .scheduled(_, let s):
            try c.encode(s, forKey: Key("scheduled"))
        case .messageUpdated(_, let m):
            try c.encode(m, forKey: Key("message"))
        case .replied(_, let r), .reply(let r):
            try c.encode(r, forKey: Key("reply"))
        case .messageRetracted(_, let messageID, let eventID):
            try c.encode(Self.id(messageID), forKey: Key("message_id"))
            try c.encode(Self.id(eventID), forKey: Key("event_id"))
            try c.encode(true, forKey: Key("retracted"))
        case .read(_, let messageID, let eventID, let unread, let counted):
            try c.encode(Self.id(messageID), forKey: Key("message_id"))
            try c.encode(Self.id(eventID), forKey: Key("event_id"))
            try c.encode(unread, forKey: Key("unread_count"))
            try c.encodeIfPresent(counted, forKey: Key("counted_through_seq"))
        case .readAll(_, let eventID, let through, let marked, let unread, let counted):
            try c.encode(Self.id(eventID), forKey: Key("event_id"))
            try c.encode(through, forKey: Key("through_seq"))
            try c.encode(marked, forKey: Key("marked"))
            try c.encode(unread, forKey: Key("unread_count"))
            try c.encodeIfPresent(counted, forKey: Key("counted_through_seq"))
        case .history(_, let eventID, let messages, let more):
            try c.encode(Self.id(eventID), forKey: Key("event_id"))
            try c.encode(messages, forKey: Key("messages"))
            try c.encode(more, forKey: Key("more"))
        case .notification(let n):
            try c.encode(n, forKey: Key("notification"))
        case .notificationRead(_, let id):
            try c.encode(Self.id(id), forKey: Key("notification_id"))
        case .events(_, let events):
            try c.encode(events, forKey: Key("events"))
        case .receipt(let r):
            try c.encode(Self.id(r.messageID), forKey: Key("message_id"))
            try c.encode(Self.id(r.eventID), forKey: Key("event_id"))
            try c.encode(Self.id(r.userID), forKey: Key("user_id"))
            try c.encode(r.displayName, forKey: Key("display_name"))
            try c.encode(r.readCount, forKey: Key("read_count"))
        case .markedRead(let eventID, let messageIDs):
            try c.encode(Self.id(eventID), forKey: Key("event_id"))
            try c.encode(messageIDs.map(Self.id), forKey: Key("message_ids"))
        case .reminder(let m, let round):
            try c.encode(m, forKey: Key("message"))
            try c.encode(round, forKey: Key("round"))
        case .pong:
            break
        case .answered(_, let id, let option):
            try c.encode(Self.id(id), forKey: Key("message_id"))
            try c.encode(option, forKey: Key("option"))
        case .pollTally(let t):
            try c.encode(Self.id(t.messageID), forKey: Key("message_id"))
            try c.encode(Self.id(t.eventID), forKey: Key("event_id"))
            try c.encode(t.counts, forKey: Key("counts"))
            try c.encode(t.answered, forKey: Key("answered"))
            try c.encode(t.audience, forKey: Key("audience"))
        case .error(_, let e):
            try c.encode(e.code.rawValue, forKey: Key("code"))
            try c.encode(e.message, forKey: Key("message"))
        }
    }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: Key.self)
        let op = try c.decode(String.self, forKey: Key("op"))
        let ref = try c.decodeIfPresent(String.self, forKey: Key("ref"))
        func uuid(_ k: String) throws -> UUID { try c.decode(UUID.self, forKey: Key(k)) }
        switch op {
        case "hello":
            self = .hello(user: Identity(userID: try uuid("user_id"),
                                         displayName: try c.decode(String.self, forKey: Key("display_name"))),
                          serverTime: try c.decodeRFC3339(forKey: Key("server_time")),
                          node: try c.decodeIfPresent(String.self, forKey: Key("node")) ?? "",
                          // An older server sends none: it may have ignored a subscribe in the URL.
                          features: try c.decodeIfPresent([String].self, forKey: Key("features")) ?? [])
        case "subscribed":
            let event = EventSummary(id: try uuid("event_id"),
                                     name: try c.decodeIfPresent(String.self, forKey: Key("event_name")) ?? "",
                                     startsAt: nil,
                                     accessLevel: try c.decodeIfPresent(AccessLevel.self, forKey: Key("access_level")) ?? .staff)
            self = .subscribed(ref: ref, event: event, history: try c.decode([StaffMessage].self, forKey: Key("history")),
                               unreadCount: try c.decode(Int.self, forKey: Key("unread_count")),
                               more: try c.decodeIfPresent(Bool.self, forKey: Key("more")) ?? false)
        case "unsubscribed": self = .unsubscribed(ref: ref, eventID: try uuid("event_id"))
        case "access_revoked": self = .accessRevoked(eventID: try uuid("event_id"))
        case "message": self = .message(try c.decode(StaffMessage.self, forKey: Key("message")))
        case "sent": self = .sent(ref: ref, message: try c.decode(StaffMessage.self, forKey: Key("message")))
        case "scheduled": self = .scheduled(ref: ref, scheduled: try c.decode(ScheduledMessage.self, forKey: Key("scheduled")))
        case "replied": self = .replied(ref: ref, reply: try c.decode(Reply.self, forKey: Key("reply")))
        case "reply": self = .reply(try c.decode(Reply.self, forKey: Key("reply")))
        case "message_updated": self = .messageUpdated(ref: ref, message: try c.decode(StaffMessage.self, forKey: Key("message")))
        case "message_retracted": self = .messageRetracted(ref: ref, messageID: try uuid("message_id"), eventID: try uuid("event_id"))
        case "read" where !c.contains(Key("message_id")):
            self = .readAll(ref: ref, eventID: try uuid("event_id"), throughSeq: try c.decode(Int64.self, forKey: Key("through_seq")),
                            marked: try c.decode(Int.self, forKey: Key("marked")),
                            unreadCount: try c.decode(Int.self, forKey: Key("unread_count")),
                            countedThroughSeq: try c.decodeIfPresent(Int64.self, forKey: Key("counted_through_seq")))
        case "read":
            self = .read(ref: ref, messageID: try uuid("message_id"), eventID: try uuid("event_id"),
                         unreadCount: try c.decode(Int.self, forKey: Key("unread_count")),
                         countedThroughSeq: try c.decodeIfPresent(Int64.self, forKey: Key("counted_through_seq")))
        case "history":
            self = .history(ref: ref, eventID: try uuid("event_id"),
                            messages: try c.decode([StaffMessage].self, forKey: Key("messages")),
                            more: try c.decodeIfPresent(Bool.self, forKey: Key("more")) ?? false)
        case "notification": self = .notification(try c.decode(StaffNotification.self, forKey: Key("notification")))
        case "notification_read": self = .notificationRead(ref: ref, notificationID: try uuid("notification_id"))
        case "events": self = .events(ref: ref, events: try c.decode([EventSummary].self, forKey: Key("events")))
        case "receipt":
            self = .receipt(ReadReceipt(messageID: try uuid("message_id"), eventID: try uuid("event_id"),
                                        userID: try uuid("user_id"),
                                        displayName: try c.decode(String.self, forKey: Key("display_name")),
                                        readCount: try c.decode(Int.self, forKey: Key("read_count"))))
        case "marked_read":
            self = .markedRead(eventID: try uuid("event_id"), messageIDs: try c.decode([UUID].self, forKey: Key("message_ids")))
        case "reminder":
            self = .reminder(message: try c.decode(StaffMessage.self, forKey: Key("message")),
                             round: try c.decode(Int.self, forKey: Key("round")))
        case "pong": self = .pong(ref: ref)
        case "answered":
            self = .answered(ref: ref, messageID: try uuid("message_id"), option: try c.decode(Int.self, forKey: Key("option")))
        case "poll_tally":
            self = .pollTally(PollTally(messageID: try uuid("message_id"), eventID: try uuid("event_id"),
                                        counts: try c.decode([Int].self, forKey: Key("counts")),
                                        answered: try c.decode(Int.self, forKey: Key("answered")),
                                        audience: try c.decode(Int.self, forKey: Key("audience"))))
        case "error":
            self = .error(ref: ref, StaffcastError(ErrorCode(try c.decode(String.self, forKey: Key("code"))),
                                                   try c.decode(String.self, forKey: Key("message"))))
        default:
            throw DecodingError.dataCorruptedError(forKey: Key("op"), in: c, debugDescription: "unknown op \(op)")
        }
    }
}
