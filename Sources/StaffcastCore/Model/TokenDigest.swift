import Foundation

/// The SHA-256 of an API token, as `api_tokens.token_hash` stores it: the key of a server's
/// in-memory table of valid tokens.
///
/// Held as four 64-bit words (big-endian order of the 32 bytes) rather than an array, so a
/// digest lives inline, compares in four steps and hashes cheaply. Only `w0` is fed to the
/// hasher: SHA-256 output is uniformly spread, and equality still compares all 256 bits.
public struct TokenDigest: Hashable, Sendable {
    public let w0: UInt64
    public let w1: UInt64
    public let w2: UInt64
    public let w3: UInt64

    /// Nil unless exactly 32 bytes.
    public init?(bytes: some Collection<UInt8>) {
        guard bytes.count == 32 else { return nil }
        var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        for (i, byte) in bytes.enumerated() {
            let b = UInt64(byte)
            switch i / 8 {
            case 0: words.0 = words.0 << 8 | b
            case 1: words.1 = words.1 << 8 | b
            case 2: words.2 = words.2 << 8 | b
            default: words.3 = words.3 << 8 | b
            }
        }
        (w0, w1, w2, w3) = words
    }

    /// From 64 hexadecimal digits (either case); nil for anything else.
    public init?(hex: some StringProtocol) {
        let utf8 = Array(hex.utf8)
        guard utf8.count == 64 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(32)
        var i = 0
        while i < 64 {
            guard let hi = HexDigit.value(utf8[i]), let lo = HexDigit.value(utf8[i + 1]) else { return nil }
            bytes.append(hi << 4 | lo)
            i += 2
        }
        self.init(bytes: bytes)
    }

    /// The 32 bytes, in order.
    public var bytes: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(32)
        for word in [w0, w1, w2, w3] {
            for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: word >> UInt64(shift))) }
        }
        return out
    }

    /// 64 lowercase hexadecimal digits.
    public var hex: String {
        var out: [UInt8] = []
        out.reserveCapacity(64)
        for byte in bytes {
            out.append(HexDigit.lowercase[Int(byte >> 4)])
            out.append(HexDigit.lowercase[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(w0)
    }

    public static func == (a: TokenDigest, b: TokenDigest) -> Bool {
        a.w0 == b.w0 && a.w1 == b.w1 && a.w2 == b.w2 && a.w3 == b.w3
    }
}
