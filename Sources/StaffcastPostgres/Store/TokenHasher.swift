import Crypto
import Foundation
import StaffcastCore

/// API tokens: 32 random bytes, shown once as `sc_<base64url>`; only their SHA-256 is stored.
public enum TokenHasher {
    public static func generate() -> String {
        var rng = SystemRandomNumberGenerator() // getrandom(2): a cryptographic source on Linux
        let bytes = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &rng) }
        let b64 = Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
        return "sc_" + b64
    }

    /// The stored form: SHA-256 of the token's UTF-8 bytes, as PostgreSQL's `\x…` bytea text.
    public static func storedHash(of token: String) -> String {
        byteaText(digest(of: token))
    }

    /// The SHA-256 of the token's UTF-8 bytes: the key servers look tokens up by in memory.
    public static func digest(of token: String) -> TokenDigest {
        guard let digest = TokenDigest(bytes: Array(SHA256.hash(data: Data(token.utf8)))) else {
            preconditionFailure("SHA-256 is 32 bytes")
        }
        return digest
    }

    /// A digest as PostgreSQL's `\x…` bytea text, for a bound parameter.
    static func byteaText(_ digest: TokenDigest) -> String { "\\x" + digest.hex }

    /// Cheap shape check before touching the database with a token.
    public static func looksValid(_ token: String) -> Bool {
        token.hasPrefix("sc_") && token.utf8.count == 46
            && token.utf8.dropFirst(3).allSatisfy { $0.isBase64URL }
    }
}

private extension UInt8 {
    var isBase64URL: Bool {
        (0x30...0x39).contains(self) || (0x41...0x5A).contains(self) || (0x61...0x7A).contains(self)
            || self == 0x2D || self == 0x5F
    }
}
