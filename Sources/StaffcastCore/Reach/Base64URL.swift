import Foundation

/// base64url without padding (RFC 4648 §5), as Web Push keys and JWTs spell bytes.
public enum Base64URL {
    public static func encode<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// Nil when `text` is not base64url (padding is accepted, as some browsers send it).
    public static func decode(_ text: String) -> [UInt8]? {
        var s = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        guard !s.contains("=") || s.hasSuffix("=") else { return nil }
        s = s.replacingOccurrences(of: "=", with: "")
        guard s.utf8.allSatisfy({ $0 == 0x2B || $0 == 0x2F || (0x30...0x39).contains($0) || (0x41...0x5A).contains($0)
                                  || (0x61...0x7A).contains($0) }) else { return nil }
        while s.count % 4 != 0 { s += "=" }
        return Data(base64Encoded: s).map { [UInt8]($0) }
    }
}
