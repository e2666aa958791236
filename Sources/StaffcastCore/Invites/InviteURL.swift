import Foundation

/// Invite codes and the join URL that carries one: `BASE/join/CODE`. Pure.
public enum InviteURL {
    /// A code is 22 base64url characters (16 random bytes).
    public static func looksLikeCode(_ code: String) -> Bool {
        code.utf8.count == 22 && code.utf8.allSatisfy {
            (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) || $0 == 0x2D || $0 == 0x5F
        }
    }

    /// The join URL of `code` on the server at `base` (e.g. `https://staff.example.org`).
    public static func make(base: String, code: String) -> String {
        var b = base
        while b.hasSuffix("/") { b.removeLast() }
        return "\(b)/join/\(code)"
    }

    /// The server's base URL and the code in a join URL (`http://host:8080/join/CODE`), or nil.
    public static func parse(_ url: String) -> (base: String, code: String)? {
        let trimmed = url.trimmingCharacters(in: .whitespaces)
        guard trimmed.hasPrefix("http://") || trimmed.hasPrefix("https://"),
              let range = trimmed.range(of: "/join/", options: .backwards) else { return nil }
        var code = String(trimmed[range.upperBound...])
        if let cut = code.firstIndex(where: { $0 == "?" || $0 == "#" || $0 == "/" }) { code = String(code[..<cut]) }
        let base = String(trimmed[..<range.lowerBound])
        guard looksLikeCode(code), base.count > "http://".count else { return nil }
        return (base, code)
    }
}
