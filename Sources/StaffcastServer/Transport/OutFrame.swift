import CLibWebSockets

/// The bytes of one outgoing WebSocket frame, with the `LWS_PRE` bytes of headroom that
/// `lws_write` needs in front of a payload.
///
/// Made once (on a worker or listener thread) and then shared: a live message is one
/// `OutFrame` queued on every subscriber. Its payload never changes; lws writes the frame
/// header into the headroom, only on the service thread, one write at a time.
final class OutFrame: @unchecked Sendable {
    static let headroom = staffcast_lws_pre()
    private let base: UnsafeMutablePointer<UInt8>
    let length: Int

    init(_ bytes: [UInt8]) {
        length = bytes.count
        base = .allocate(capacity: Self.headroom + max(bytes.count, 1))
        bytes.withUnsafeBufferPointer { src in
            if let p = src.baseAddress { (base + Self.headroom).update(from: p, count: bytes.count) }
        }
    }

    deinit { base.deallocate() }

    /// First payload byte; `headroom` writable bytes precede it.
    var payload: UnsafeMutablePointer<UInt8> { base + Self.headroom }
}
