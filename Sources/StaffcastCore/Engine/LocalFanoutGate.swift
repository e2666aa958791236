/// Decides whether a batch of sends that this server has just committed may be handed to its
/// service loops at once, ahead of the change feed, and which of the feed's messages were
/// handed on that way already (issue 21 item 2: commit to first byte without the NOTIFY
/// wake-up and the read of the logs).
///
/// Every subscriber must still see each event's messages exactly once, in `seq` order, and
/// never a message that an access or token change committed before it should hide. Both paths
/// hand batches to the loops in one order (the caller serialises them), so the rule is about
/// what has been handed on, per log:
/// - the batch may go first only when every message committed before it has been handed on
///   (`posted.message` is at least the highest seq below the batch: `messagesBefore`), and so has
///   every access and token change committed before it (`accessThrough`, `tokenThrough`, read in
///   the send's transaction under a shared lock on those logs, so none can commit between the
///   read and the send's `COMMIT`: sql/014);
/// - otherwise the feed is behind and hands the batch on itself, in order, when it reads it.
/// The feed then skips what went first: a message at or below `posted.message`.
///
/// Pure: no I/O, no clock, no lock (`ChangeFeed` owns one behind its mutex).
public struct LocalFanoutGate: Sendable, Equatable {
    /// The highest seq of each log handed to the loops.
    public struct Position: Sendable, Equatable {
        public var message: Int64
        public var access: Int64
        public var token: Int64
        public init(message: Int64, access: Int64, token: Int64) {
            self.message = message; self.access = access; self.token = token
        }
    }

    /// A batch of sends as it committed: its seqs and where the logs stood under its locks.
    public struct Commit: Sendable, Equatable {
        public var firstSeq: Int64
        public var lastSeq: Int64
        /// The highest seq of a message committed before this batch (0: none).
        public var messagesBefore: Int64
        /// The highest seq of access_changes and token_changes committed before this batch.
        public var accessThrough: Int64
        public var tokenThrough: Int64
        public init(firstSeq: Int64, lastSeq: Int64, messagesBefore: Int64, accessThrough: Int64, tokenThrough: Int64) {
            self.firstSeq = firstSeq; self.lastSeq = lastSeq; self.messagesBefore = messagesBefore
            self.accessThrough = accessThrough; self.tokenThrough = tokenThrough
        }
    }

    public enum Decision: Sendable, Equatable {
        /// Hand it on now; the feed will skip it.
        case handOn
        /// Something committed before it has not been handed on yet: the feed brings it, in order.
        case feedBehind
        /// The feed was faster and handed it on already.
        case alreadyHandedOn
    }

    public private(set) var posted: Position

    /// `start`: where the change feed starts following the logs.
    public init(start: Position) { posted = start }

    /// What `admit` would decide now, without moving on (a caller can skip encoding a batch
    /// that will not go first; the answer can only change from `feedBehind` to another one).
    public func decision(for commit: Commit) -> Decision {
        if posted.message >= commit.firstSeq { return .alreadyHandedOn }
        guard posted.message >= commit.messagesBefore, posted.access >= commit.accessThrough,
              posted.token >= commit.tokenThrough else { return .feedBehind }
        return .handOn
    }

    public mutating func admit(_ commit: Commit) -> Decision {
        let decision = decision(for: commit)
        if decision == .handOn { posted.message = commit.lastSeq }
        return decision
    }

    /// The feed is about to hand on a batch that read the logs up to `through`. Returns the seq
    /// at or below which its messages were handed on already (skip them), and moves on.
    public mutating func feed(through: Position) -> Int64 {
        let skipThrough = posted.message
        posted = Position(message: max(posted.message, through.message), access: max(posted.access, through.access),
                          token: max(posted.token, through.token))
        return skipThrough
    }
}
