import Foundation

/// The unread count a client shows after a reply that carries one (`read`, and the `read`
/// answering `mark_all_read`). The server counts in a database snapshot; a message committed
/// after that snapshot can reach the client live before the reply does, and taking the reply's
/// number as it stands drops that message from the badge until the next read. The reply says
/// the highest seq its snapshot could see (`counted_through_seq`): seq is commit order (the
/// message log's advisory lock), so every message up to it was counted and none after it.
/// Pure: the client keeps the state, this only counts.
public enum CountedUnread {
    /// The reply's count plus what `held` (the event's messages the client holds, retracted
    /// ones already gone) has after `countedThroughSeq`, unread, not `user`'s own, unexpired.
    /// `countedThroughSeq` nil (a server without the field): the reply's count as it is.
    public static func count(reply: Int, countedThroughSeq: Int64?, held: some Sequence<StaffMessage>, user: UUID?,
                             now: Date) -> Int {
        guard let through = countedThroughSeq else { return reply }
        return reply + held.reduce(0) { n, m in
            n + (m.seq > through && !m.read && m.senderID != user && !m.isExpired(at: now) ? 1 : 0)
        }
    }

    /// Whether a live message still has to be added to the count: not when the last reply's
    /// snapshot (`countedThroughSeq`, nil: none since subscribing) already counted it.
    public static func liveIsUncounted(seq: Int64, countedThroughSeq: Int64?) -> Bool {
        countedThroughSeq.map { seq > $0 } ?? true
    }
}
