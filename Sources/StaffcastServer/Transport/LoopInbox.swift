/// What other threads hand a service loop, in three lanes (guarded by the loop's mutex).
///
/// `live` holds fan-out from the change feed (messages, revokes): the loop runs all of it at
/// every wake-up, before anything else. `work` holds everything else (other database answers,
/// subscribe batches, ticks): the loop moves it to its own backlog and runs it
/// within a budget per wake-up (`ServiceLoop.drainInbox`), so a reconnect storm's
/// thousands of answers never sit between a live message and its sockets.
///
/// `answers` holds the answers to a client's own requests: a group commit's `sent`, `read`,
/// `answered` on a WebSocket, and every HTTP answer. Each is run at the loop's next chance, even
/// between the writes of a long fan-out (`ServiceLoop.runAnswers`, at most 128 a turn), so a
/// publisher's window does not wait for a turn of writes to end.
///
/// Bounds: `answers` by what can be in flight (`max_in_flight_per_connection` per WebSocket,
/// 16 pipelined requests per HTTP connection); `live` is kept under `ChangeFeed.maxInboxDepth` by the change feed, which waits
/// before posting more (the change log keeps the rest); `work` is bounded by what can be in
/// flight (the worker queue's capacity, `max_in_flight_per_connection` requests per WebSocket,
/// 16 pipelined requests per HTTP connection).
struct LoopInbox {
    var live: [ServiceLoop.Work] = []
    var work: [ServiceLoop.Work] = []
    var answers: [ServiceLoop.Work] = []
    /// The libwebsockets context to wake (0 while the loop has none).
    var context: UInt = 0
    /// A wake-up was asked for since the loop last took the inbox: posting more needs none
    /// (a group commit answering 256 sends wakes the loop once, not 256 times).
    var wakeAsked = false

    /// Whether the poster must wake the loop now (and notes that it will).
    mutating func needsWake() -> Bool {
        guard context != 0, !wakeAsked else { return false }
        wakeAsked = true
        return true
    }

    var count: Int { live.count + work.count + answers.count }
}
