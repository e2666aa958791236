import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A proxy between staffcast and the test cluster's Unix socket that can go silent: `pause()`
/// stops forwarding in both directions (connections stay open, new ones are accepted and then
/// hear nothing), as a network that drops every packet or a frozen database host would;
/// `resume()` forwards again, bytes held meanwhile included. Only connections made through its
/// conninfo are affected, so the shared cluster serves other tests as usual.
final class SilentProxy: @unchecked Sendable {
    let directory: String
    private let relay: ByteRelay

    /// Listens at `<new temp dir>/.s.PGSQL.5432` and forwards to the socket of the server
    /// that `conninfo` names (`host='DIR' port=5432`).
    init(forwardingTo conninfo: String) throws {
        guard let host = Self.hostRange(conninfo) else { throw RawSocketError("no host='…' in the conninfo \(conninfo)") }
        let upstream = "\(conninfo[host].dropFirst(6).dropLast())/.s.PGSQL.5432"
        directory = "/tmp/sc-proxy-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        var address = try Self.address("\(directory)/.s.PGSQL.5432")
        let listenFD = try ByteRelay.listeningSocket(AF_UNIX, at: &address, backlog: 128)
        let upstreamAddress = try Self.address(upstream)
        relay = ByteRelay(listenFD: listenFD, records: false) { ByteRelay.connectedSocket(AF_UNIX, to: upstreamAddress) }
    }

    /// The same database through this proxy.
    func conninfo(_ original: String) -> String {
        guard let host = Self.hostRange(original) else { return original }
        return original.replacingCharacters(in: host, with: "host='\(directory)'")
    }

    /// Where `host='…'` is in a conninfo (the test cluster's paths hold no quote).
    private static func hostRange(_ conninfo: String) -> Range<String.Index>? {
        guard let start = conninfo.range(of: "host='"),
              let end = conninfo[start.upperBound...].firstIndex(of: "'") else { return nil }
        return start.lowerBound..<conninfo.index(after: end)
    }

    func pause() { relay.pause() }
    func resume() { relay.resume() }

    /// Closes every connection (clients see them end) and the listening socket.
    func stop() {
        relay.stop()
        try? FileManager.default.removeItem(atPath: directory)
    }

    private static func address(_ path: String) throws -> sockaddr_un {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { throw RawSocketError("socket path too long: \(path)") }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, b) in bytes.enumerated() { raw[i] = b }
        }
        return address
    }
}
