import Foundation
import StaffcastCore

/// How far a server has read each change log (`staff_messages.seq`, `notifications.seq`,
/// `access_changes.seq`, `token_changes.seq`). Made by the store (`Store.currentCursors`), so
/// its memberwise init (every log at 0 unless given) is internal.
public struct ChangeCursors: Sendable, Equatable {
    public var message: Int64 = 0
    public var notification: Int64 = 0
    public var access: Int64 = 0
    public var token: Int64 = 0
    /// `message_reads.seq` (receipts) and `escalation_rounds.seq` (reminders).
    public var read: Int64 = 0
    public var round: Int64 = 0
    /// `message_changes.seq` (edits and retracts, sql/008).
    public var messageChange: Int64 = 0
    /// `message_replies.seq` (sql/008).
    public var reply: Int64 = 0
    /// `poll_answer_log.seq` (live poll tallies, sql/011).
    public var answer: Int64 = 0
}

/// An escalation round as the change feed reads it: remind `unread` of `message`.
public struct ReminderChange: Sendable, Equatable {
    public var seq: Int64
    public var round: Int
    public var unread: [UUID]
    public var message: StaffMessage
}

/// One access change: `level == nil` means access ended.
public struct AccessChange: Sendable, Equatable {
    public var seq: Int64
    public var eventID: UUID
    public var userID: UUID
    public var level: AccessLevel?
}

/// One token change, with the token's state as of the batch's snapshot (not as of `seq`):
/// applying a batch's changes in order leaves a server's token table right.
public struct TokenChange: Sendable, Equatable {
    public var seq: Int64
    public var digest: TokenDigest
    public var userID: UUID
    /// Who the token authenticates now; nil: the token is no longer valid (revoked, deleted,
    /// or already expired) and must be dropped, and its open connections closed.
    public var identity: Identity?
    /// When the token stops being valid by itself. No change row is written at that moment:
    /// a server holding the token compares this with its clock.
    public var expiresAt: Date?
}

/// An edit or a retract, read from `message_changes`: for an edit, the message as it is now.
public struct MessageChange: Sendable, Equatable {
    public enum Action: String, Sendable { case edit, retract }
    public var seq: Int64
    public var action: Action
    public var messageID: UUID
    public var eventID: UUID
    /// The message now (edits only; a retracted message is not handed on).
    public var message: StaffMessage?
}

/// Committed changes read from one snapshot, so that an access change committed before a
/// message is always seen together with it (revokes are applied before messages fan out).
public struct ChangeBatch: Sendable {
    public var access: [AccessChange] = []
    /// Unexpired messages, in seq order, with `read == false` (nobody has had them yet).
    public var messages: [StaffMessage] = []
    public var notifications: [StaffNotification] = []
    /// Token changes in seq order.
    public var tokens: [TokenChange] = []
    /// Reads, in seq order (live `receipt` frames).
    public var receipts: [ReadReceipt] = []
    /// Escalation rounds, in seq order (live `reminder` frames).
    public var reminders: [ReminderChange] = []
    /// Edits and retracts in seq order, after `messages`.
    public var messageChanges: [MessageChange] = []
    /// Replies in seq order, each with its event's admins and owners (who get it live) as of
    /// this snapshot.
    public var replies: [(reply: Reply, organisers: Set<UUID>)] = []
    /// The audience of each targeted message in `messages` and `messageChanges` (fixed when it
    /// was sent: sql/011), by message id; a message not here went to the whole event.
    public var audiences: [UUID: Set<UUID>] = [:]
    /// Polls answered in this batch, each with its tally as of this snapshot (once per poll).
    public var tallies: [PollTally] = []
    /// The cursors after this batch.
    public var cursors: ChangeCursors
    /// True when a log had more rows than one batch takes; read again at once.
    public var hasMore = false
    /// When the listener started and finished reading this batch (wall clock, seconds since
    /// 1970): the change-feed stages of a traced message.
    public var readStartedAt = 0.0
    public var readAt = 0.0

    public var isEmpty: Bool {
        access.isEmpty && messages.isEmpty && notifications.isEmpty && tokens.isEmpty && messageChanges.isEmpty && replies.isEmpty
            && receipts.isEmpty && reminders.isEmpty && tallies.isEmpty
    }
}
