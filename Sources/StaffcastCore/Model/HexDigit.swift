/// One hexadecimal digit as ASCII, both ways: the one place ids, token digests and percent
/// escapes read and write hex (byte-level, for the hot paths that use it). Pure.
public enum HexDigit {
    /// The value of `c` (`0-9`, `a-f`, `A-F`), or nil.
    @inline(__always) public static func value(_ c: UInt8) -> UInt8? {
        switch c {
        case 0x30...0x39: return c - 0x30
        case 0x61...0x66: return c - 0x61 + 10
        case 0x41...0x46: return c - 0x41 + 10
        default: return nil
        }
    }

    /// The lower-case digits, by value.
    public static let lowercase: [UInt8] = Array("0123456789abcdef".utf8)
}
