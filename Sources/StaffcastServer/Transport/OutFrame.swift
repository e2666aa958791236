import CLibWebSockets
import StaffcastCore

/// One outgoing WebSocket frame, complete on the wire: header and payload, with
/// `LWS_PRE` bytes of headroom in front that libwebsockets may use.
///
/// Made once (on a worker or the listener thread) and then shared, unchanged, by every
/// connection on every service loop that gets it: a live message is one `OutFrame`. It is
/// written with `LWS_WRITE_RAW`, so nobody, libwebsockets included, ever writes into it after
/// `init`; several loops may write it to their sockets at the same time.
final class OutFrame: WireFrame, @unchecked Sendable {
    static let headroom = staffcast_lws_pre()
    private let base: UnsafeMutablePointer<UInt8>
    /// Bytes of the whole frame (header and payload).
    let wireLength: Int

    /// A final text frame (opcode 1), unmasked as server frames are.
    convenience init(text payload: [UInt8]) {
        self.init(opcode: 0x1, payload: payload)
    }

    init(opcode: UInt8, payload: [UInt8]) {
        var header: [UInt8] = [0x80 | opcode]
        let n = payload.count
        if n < 126 {
            header.append(UInt8(n))
        } else if n <= 0xFFFF {
            header += [126, UInt8(n >> 8), UInt8(n & 0xFF)]
        } else {
            header.append(127)
            for shift in stride(from: 56, through: 0, by: -8) { header.append(UInt8((n >> shift) & 0xFF)) }
        }
        wireLength = header.count + n
        base = .allocate(capacity: Self.headroom + wireLength)
        let wire = base + Self.headroom
        header.withUnsafeBufferPointer { wire.update(from: $0.baseAddress!, count: header.count) }
        payload.withUnsafeBufferPointer { src in
            if let p = src.baseAddress { (wire + header.count).update(from: p, count: n) }
        }
    }

    deinit { base.deallocate() }

    /// First byte of the frame; `headroom` bytes precede it.
    var wire: UnsafePointer<UInt8> { UnsafePointer(base + Self.headroom) }
}
