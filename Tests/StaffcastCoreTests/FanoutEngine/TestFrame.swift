import StaffcastCore

/// A frame as these tests see it: the payload bytes and nothing else (no WebSocket header),
/// so `wireLength` is the payload's length.
final class TestFrame: WireFrame {
    let payload: [UInt8]
    init(text payload: [UInt8]) { self.payload = payload }
    var wireLength: Int { payload.count }
}
