/// When to give freed memory back to the system (`malloc_trim`): after a wave of connections
/// has closed. The allocator keeps what hundreds of closed connections (TLS handshakes above
/// all: OpenSSL's buffers) used in its arenas, so a server that once held a flood stays that
/// large; trimming after the wave returns it. Not after every close: a trim walks the whole
/// heap, so at most once per `minimumInterval`, and only when at least `wave` connections
/// fewer are held than at the peak since the last trim.
///
/// Pure: fed the number of connections held (HTTP and WebSocket, every loop) and a monotonic
/// clock by the ticker, which does the trim (never on a service loop). Not thread-safe: one owner.
public struct MemoryTrimPolicy: Sendable {
    public let wave: Int
    public let minimumInterval: Double
    private var peak = 0
    private var lastTrim: Double?

    public init(wave: Int = 256, minimumInterval: Double = 10) {
        self.wave = wave
        self.minimumInterval = minimumInterval
    }

    /// Records what is held now; true when now is the time to trim (then counted as done).
    public mutating func observe(held: Int, now: Double) -> Bool {
        peak = max(peak, held)
        guard peak - held >= wave else { return false }
        if let lastTrim, now - lastTrim < minimumInterval { return false }
        lastTrim = now
        peak = held
        return true
    }
}
