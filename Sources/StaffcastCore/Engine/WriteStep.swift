/// What a connection writes when its socket is writable (`FanoutEngine.writable`).
public enum WriteStep<Frame>: Sendable where Frame: Sendable {
    /// Nothing to write.
    case idle
    /// Write these frames, in order, as one write; `more`: ask for another writable callback.
    case frames([Frame], more: Bool)
    /// Write a WebSocket ping (the engine times the answer); `more` as above.
    case ping(more: Bool)
    /// Send a close frame with this code and reason, then close the socket.
    case close(code: UInt16, reason: String)
}
