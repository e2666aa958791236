import Foundation

/// Changes committed by any server, read by the change listener in one snapshot, with each
/// live frame encoded once. The same batch (the same frame objects) goes to every service
/// loop. Applied in this order: token and access changes first, so nobody who lost access
/// gets a message committed after that.
public struct CommittedBatch<Frame: WireFrame>: Sendable {
    public struct Access: Sendable {
        public var seq: Int64
        public var eventID: UUID
        public var userID: UUID
        /// nil: access ended.
        public var level: AccessLevel?
        /// The `access_revoked` frame, when access ended.
        public var revokedFrame: Frame?
        public init(seq: Int64, eventID: UUID, userID: UUID, level: AccessLevel?, revokedFrame: Frame?) {
            self.seq = seq; self.eventID = eventID; self.userID = userID; self.level = level; self.revokedFrame = revokedFrame
        }
    }

    public struct Message: Sendable {
        public var seq: Int64
        public var eventID: UUID
        public var expiresAt: Date?
        public var frame: Frame
        /// Sent to teams (docs/protocol.md, Audiences): only these users get it (the members
        /// when it was sent and the event's admins and owners); nil: every subscriber.
        public var audience: Set<UUID>?
        public init(seq: Int64, eventID: UUID, expiresAt: Date?, frame: Frame, audience: Set<UUID>? = nil) {
            self.seq = seq; self.eventID = eventID; self.expiresAt = expiresAt; self.frame = frame; self.audience = audience
        }
    }

    /// A live frame about an event that is not a new message: `message_updated` and
    /// `message_retracted` go to every subscriber of the event; `reply` only to the subscribers
    /// who are the event's admins and owners (`audience`, read from the same snapshot as the
    /// reply, so a level change is applied in commit order).
    public struct EventFrame: Sendable {
        public var eventID: UUID
        public var frame: Frame
        /// nil: every subscriber of the event; else only these users among them.
        public var audience: Set<UUID>?
        /// An edit's or retract's `message_changes` seq (nil for a reply): the hub keeps those
        /// for subscribes whose snapshot predates them (`Hub.recordChange`).
        public var changeSeq: Int64?
        public init(eventID: UUID, frame: Frame, audience: Set<UUID>? = nil, changeSeq: Int64? = nil) {
            self.eventID = eventID; self.frame = frame; self.audience = audience; self.changeSeq = changeSeq
        }

        /// The audience rule: a subscriber of the event gets the frame when there is no
        /// audience or they are in it.
        public func reaches(_ user: UUID) -> Bool { audience?.contains(user) ?? true }
    }

    public struct Notification: Sendable {
        public var userID: UUID
        public var frame: Frame
        public init(userID: UUID, frame: Frame) { self.userID = userID; self.frame = frame }
    }

    /// Someone read a message: the `receipt` frame goes to the admins and owners subscribed
    /// to its event (never to staff).
    public struct Receipt: Sendable {
        public var eventID: UUID
        public var frame: Frame
        public init(eventID: UUID, frame: Frame) { self.eventID = eventID; self.frame = frame }
    }

    /// An escalation round: the `reminder` frame goes to the connections of `users` (who have
    /// not read the message) subscribed to its event.
    public struct Reminder: Sendable {
        public var eventID: UUID
        public var users: [UUID]
        public var frame: Frame
        public init(eventID: UUID, users: [UUID], frame: Frame) { self.eventID = eventID; self.users = users; self.frame = frame }
    }

    /// Someone read messages of an event, on one of their devices: the `marked_read` frame goes
    /// to all their connections subscribed to it, so a second device stops counting (and
    /// ringing for) what was read on the first.
    public struct MarkedRead: Sendable {
        public var userID: UUID
        public var eventID: UUID
        public var frame: Frame
        public init(userID: UUID, eventID: UUID, frame: Frame) { self.userID = userID; self.eventID = eventID; self.frame = frame }
    }

    /// Tokens that stopped being valid: their open WebSockets are closed with 4401.
    public var revokedTokens: Set<TokenDigest>
    /// Tokens that expired by the clock: closed the same way, the reason saying "token expired".
    public var expiredTokens: Set<TokenDigest>
    public var access: [Access]
    public var messages: [Message]
    public var notifications: [Notification]
    /// Applied after `messages`, in log order.
    public var eventFrames: [EventFrame]
    public var receipts: [Receipt]
    public var reminders: [Reminder]
    public var markedRead: [MarkedRead]

    /// Nothing for a loop to do.
    public var isEmpty: Bool {
        revokedTokens.isEmpty && expiredTokens.isEmpty && access.isEmpty && messages.isEmpty && notifications.isEmpty && eventFrames.isEmpty
            && receipts.isEmpty && reminders.isEmpty && markedRead.isEmpty
    }

    public init(revokedTokens: Set<TokenDigest> = [], expiredTokens: Set<TokenDigest> = [], access: [Access] = [], messages: [Message] = [],
                notifications: [Notification] = [], eventFrames: [EventFrame] = [], receipts: [Receipt] = [],
                reminders: [Reminder] = [], markedRead: [MarkedRead] = []) {
        self.eventFrames = eventFrames
        self.markedRead = markedRead
        self.receipts = receipts
        self.reminders = reminders
        self.revokedTokens = revokedTokens
        self.expiredTokens = expiredTokens
        self.access = access
        self.messages = messages
        self.notifications = notifications
    }
}
