/// What one loop saw of a read storm: every subscribed connection sends one `mark_read`.
struct MarkStats {
    var sent = 0
    var replies = 0
    /// `read` replies beyond the first on one connection.
    var duplicateReplies = 0
    /// `read` replies naming another message.
    var wrongMessage = 0
    var errors: [String: Int] = [:]
    var errorSample: String?
    var firstSendNs: Int64 = 0
    var lastSendNs: Int64 = 0
    var lastReplyNs: Int64 = 0
    /// `mark_read` sent → its `read` reply, per subscriber.
    var markToReply = Histogram()
}
