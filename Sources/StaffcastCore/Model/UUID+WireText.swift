import Foundation

/// A UUID as the wire writes it (36 characters, lower case) and reads it (either case).
///
/// Hand-written because it is on the hot path: every frame and body names ids, and a storm of
/// 10,000 reconnects parses and writes several per connection. Foundation's `uuidString` on
/// Linux formats with `sprintf` (then `lowercased()` copies it again) and `UUID(uuidString:)`
/// parses with `sscanf`; together they were ~3 % of a reconnect storm's server CPU. Tested equal
/// to Foundation's, both ways (`UUIDWireTextTests`). Pure; any thread.
extension UUID {
    /// Lower-case, with dashes: `0437acef-4adc-4730-a09f-4e4566530476`.
    public var wireText: String {
        String(unsafeUninitializedCapacity: 36) { out in
            withUnsafeBytes(of: uuid) { bytes in
                var o = 0
                for (i, b) in bytes.enumerated() {
                    if i == 4 || i == 6 || i == 8 || i == 10 {
                        out[o] = UInt8(ascii: "-")
                        o += 1
                    }
                    out[o] = HexDigit.lowercase[Int(b >> 4)]
                    out[o + 1] = HexDigit.lowercase[Int(b & 0x0F)]
                    o += 2
                }
            }
            return 36
        }
    }

    /// Reads the 36-character form in either case; nil for anything else (stricter than
    /// Foundation's on Linux, whose `sscanf` also takes a leading space in place of a digit).
    public init?(wireText text: String) {
        var text = text
        guard let parsed = text.withUTF8({ Self.parse($0) }) else { return nil }
        self.init(uuid: parsed)
    }

    /// Reads the 36-byte form from bytes in either case; nil for anything else.
    static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> uuid_t? {
        guard bytes.count == 36 else { return nil }
        var raw: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        let ok = withUnsafeMutableBytes(of: &raw) { out -> Bool in
            var i = 0
            for k in 0..<16 {
                if i == 8 || i == 13 || i == 18 || i == 23 {
                    guard bytes[i] == UInt8(ascii: "-") else { return false }
                    i += 1
                }
                guard let high = HexDigit.value(bytes[i]), let low = HexDigit.value(bytes[i + 1]) else { return false }
                out[k] = high << 4 | low
                i += 2
            }
            return true
        }
        return ok ? raw : nil
    }
}
