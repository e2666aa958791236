import CBenchEpoll
import Foundation
import Glibc

/// One subscriber connection, owned by one `SubscriberLoop`.
final class Subscriber {
    enum State { case connecting, handshake, open, subscribed, closed }
    let fd: Int32
    var state = State.connecting
    /// Bytes of an incomplete frame (or response head) left from the last read.
    var partial: [UInt8] = []
    /// A fragmented text message being put together (servers rarely fragment).
    var fragment: [UInt8]?
    /// Bytes the socket did not take yet.
    var out: [UInt8] = []
    /// Sequence numbers received in this scenario, relative to the loop's `base`.
    var received = Bitset()
    var subscribeTries = 0
    /// The close code the server sent (−1: the connection ended without a close frame).
    var closeCode = 0
    /// Its own upgrade request (its own token: the read storm's distinct users); nil = the loop's.
    var upgrade: [UInt8]?
    /// Read storm: when this subscriber sent its `mark_read` (0: not sent), and `read` replies got.
    var markSentNs: Int64 = 0
    var readReplies = 0
    /// Which of the loop's servers it is connected to (an index into `ports`).
    var server = 0
    /// NATS: protocol bytes of an operation not yet complete (frames need not end at a line).
    var stream: [UInt8] = []

    init(fd: Int32) { self.fd = fd }
}
