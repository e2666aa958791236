import Foundation
import StaffcastCore
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Checks a push endpoint's host against `DeliveryHostRule` before it is stored: its spelling at
/// once, then its addresses, resolved on this check's own thread (a slow DNS answer never holds
/// a service loop or a database worker). At most `maxWaiting` checks wait; past that `check`
/// answers `unavailable` at once. Used from any thread.
final class PushHostCheck: Sendable {
    private let queue = DispatchQueue(label: "staffcast-push-host-check")
    private let waiting = Atomic<Int>(0)
    let maxWaiting: Int

    init(maxWaiting: Int = 64) { self.maxWaiting = maxWaiting }

    /// Calls `done` with nil when `host` may receive pushes, else the error to answer.
    func check(_ host: String, done: @escaping @Sendable (StaffcastError?) -> Void) {
        if let refusal = DeliveryHostRule.refusal(host: host) {
            done(Self.refused(refusal))
            return
        }
        guard waiting.add(1, ordering: .relaxed).newValue <= maxWaiting else {
            waiting.subtract(1, ordering: .relaxed)
            done(.unavailable("Too many push subscriptions are being checked right now; try again in a moment."))
            return
        }
        queue.async { [self] in
            let refusal = DeliveryHostRule.refusal(host: host, addresses: Self.addresses(of: host))
            waiting.subtract(1, ordering: .relaxed)
            done(refusal.map(Self.refused))
        }
    }

    static func refused(_ reason: String) -> StaffcastError {
        .invalid("endpoint refused: \(reason) Subscribe through the browser's own push service "
                 + "(a server that pushes through a private one sets push_allow_private_hosts).")
    }

    /// The host's IPv4 and IPv6 addresses (4 or 16 bytes each); empty when it does not resolve.
    static func addresses(of host: String) -> [[UInt8]] {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, nil, &hints, &list) == 0, let first = list else { return [] }
        defer { freeaddrinfo(first) }
        var found: [[UInt8]] = []
        var next: UnsafeMutablePointer<addrinfo>? = first
        while let ai = next {
            if let sa = ai.pointee.ai_addr {
                if ai.pointee.ai_family == AF_INET {
                    sa.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { sin in
                        withUnsafeBytes(of: sin.pointee.sin_addr) { found.append(Array($0)) }
                    }
                } else if ai.pointee.ai_family == AF_INET6 {
                    sa.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { sin6 in
                        withUnsafeBytes(of: sin6.pointee.sin6_addr) { found.append(Array($0)) }
                    }
                }
            }
            next = ai.pointee.ai_next
        }
        return found
    }
}
