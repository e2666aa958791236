/// Which hosts a push subscription may point the server at (docs/operations.md, "Push, email and
/// webhooks"). A staff token can register any endpoint, so without this rule one person can make
/// the server's delivery threads call loopback or the private network (and wait on them).
/// Refused: IP literals (no push service is one), `localhost` names, and names that resolve
/// to loopback, private, link-local, shared (CGNAT) or unspecified addresses.
/// Pure: the caller resolves the name and passes the addresses (`push_allow_private_hosts`
/// turns the rule off, for tests and a private push service).
public enum DeliveryHostRule {
    /// Why `host` (a URL's host, brackets allowed) is refused by its spelling alone; nil when
    /// it is a name that has to be resolved first.
    public static func refusal(host: String) -> String? {
        var h = host.lowercased()
        if h.hasPrefix("["), h.hasSuffix("]") { h = String(h.dropFirst().dropLast()) }
        while h.hasSuffix(".") { h.removeLast() }
        if h.isEmpty { return "the endpoint has no host." }
        if h.contains(":") { return "the endpoint's host is an IP address; a push service has a name." }
        // A last label of digits (or 0x…) is an IPv4 address in one of the forms resolvers accept
        // ("127.1", "2130706433", "0x7f.0.0.1"); no top-level domain is numeric.
        let last = h.split(separator: ".").last.map(String.init) ?? h
        if last.allSatisfy(\.isNumber) || last.hasPrefix("0x") {
            return "the endpoint's host is an IP address; a push service has a name."
        }
        if h == "localhost" || h.hasSuffix(".localhost") { return "the endpoint's host is this machine (localhost)." }
        return nil
    }

    /// True for an address (4 or 16 bytes, network order) the server must not deliver to:
    /// unspecified, loopback, private (RFC 1918, fc00::/7), link-local, shared (100.64/10),
    /// and IPv4 written as IPv6 (::ffff:a.b.c.d) when the IPv4 address is one of those.
    public static func isPrivate(_ address: [UInt8]) -> Bool {
        switch address.count {
        case 4:
            let (a, b) = (address[0], address[1])
            return a == 0 || a == 10 || a == 127 || (a == 169 && b == 254) || (a == 172 && (16...31).contains(b))
                || (a == 192 && b == 168) || (a == 100 && (64...127).contains(b)) || a >= 224
        case 16:
            if address[0..<10].allSatisfy({ $0 == 0 }), address[10] == 0xff, address[11] == 0xff {
                return isPrivate(Array(address[12..<16]))
            }
            if address[0..<15].allSatisfy({ $0 == 0 }) { return true } // :: and ::1
            return (address[0] & 0xfe) == 0xfc || (address[0] == 0xfe && (address[1] & 0xc0) == 0x80)
        default:
            return true
        }
    }

    /// Why an endpoint whose host resolved to `addresses` is refused; nil when every address is public.
    public static func refusal(host: String, addresses: [[UInt8]]) -> String? {
        if let r = refusal(host: host) { return r }
        if addresses.isEmpty { return "the endpoint's host \(host.prefix(100)) does not resolve." }
        if addresses.contains(where: isPrivate) {
            return "the endpoint's host \(host.prefix(100)) is on a loopback, private or link-local network."
        }
        return nil
    }
}
