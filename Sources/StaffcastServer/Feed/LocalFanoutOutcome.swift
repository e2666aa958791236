/// What the committing server did with a batch of sends it committed
/// (`staffcast_local_fanout_batches_total{outcome=…}`; `ChangeFeed.handOn`).
enum LocalFanoutOutcome: String, CaseIterable, Sendable {
    /// Handed to this server's loops at once; the change feed skips it.
    case handedOn = "handed_on"
    /// Something committed before it (a message, an access or token change) had not been
    /// handed on yet: the change feed brings it, in order.
    case feedBehind = "feed_behind"
    /// The change feed was faster.
    case feedFirst = "feed_first"
    /// A message of the batch goes to teams: its audience is read by the change feed.
    case targeted
    /// A loop's live lane is full: the change feed brings it when there is room.
    case busy
    /// `local_fanout: false`.
    case off
}
