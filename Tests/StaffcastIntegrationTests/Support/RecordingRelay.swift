import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A TCP relay on 127.0.0.1 in front of a test's server that keeps what each client sent, so a
/// test sees a real client's upgrade request and frames as they went over the wire (no client
/// is changed or mocked). `dropAll()` ends the connections open now, as a lost network would;
/// new ones are relayed as before.
final class RecordingRelay: @unchecked Sendable {
    let port: Int
    private let relay: ByteRelay

    /// Listens on a free port of 127.0.0.1 and relays to 127.0.0.1:`upstreamPort`.
    init(to upstreamPort: Int) throws {
        var address = Self.loopback(port: 0)
        let fd = try ByteRelay.listeningSocket(AF_INET, at: &address, backlog: 16)
        port = Int(UInt16(bigEndian: address.sin_port))
        let upstream = Self.loopback(port: UInt16(upstreamPort))
        relay = ByteRelay(listenFD: fd, records: true) { ByteRelay.connectedSocket(AF_INET, to: upstream) }
    }

    /// The bytes each client sent so far, a connection each, oldest first.
    var clientBytes: [[UInt8]] { relay.clientBytes }

    /// Ends every connection open now (both sides see it end).
    func dropAll() { relay.dropAll() }

    /// Ends every connection and stops listening.
    func stop() { relay.stop() }

    private static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(port.bigEndian)
        address.sin_addr.s_addr = in_addr_t(UInt32(0x7F00_0001).bigEndian)
        return address
    }
}
