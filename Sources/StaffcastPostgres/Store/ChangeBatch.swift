import Foundation
import StaffcastCore

/// How far a server has read each change log (`staff_messages.seq`, `notifications.seq`,
/// `access_changes.seq`).
public struct ChangeCursors: Sendable, Equatable {
    public var message: Int64
    public var notification: Int64
    public var access: Int64

    public init(message: Int64 = 0, notification: Int64 = 0, access: Int64 = 0) {
        self.message = message
        self.notification = notification
        self.access = access
    }
}

/// One access change: `level == nil` means access ended.
public struct AccessChange: Sendable, Equatable {
    public var seq: Int64
    public var eventID: UUID
    public var userID: UUID
    public var level: AccessLevel?
}

/// Committed changes read from one snapshot, so that an access change committed before a
/// message is always seen together with it (revokes are applied before messages fan out).
public struct ChangeBatch: Sendable {
    public var access: [AccessChange] = []
    /// Unexpired messages, in seq order, with `read == false` (nobody has had them yet).
    public var messages: [StaffMessage] = []
    public var notifications: [StaffNotification] = []
    /// The cursors after this batch.
    public var cursors: ChangeCursors
    /// True when a log had more rows than one batch takes; read again at once.
    public var hasMore = false

    public var isEmpty: Bool { access.isEmpty && messages.isEmpty && notifications.isEmpty }
}
