/// Checks UTF-8 a byte at a time, across fragment and read boundaries (RFC 3629: no overlong
/// forms, no surrogates, nothing past U+10FFFF), so a text message can be judged while it
/// streams through without being buffered. A value type; its owner's thread only.
public struct UTF8Validator: Sendable, Equatable {
    /// Continuation bytes still expected for the current sequence.
    private var needed = 0
    /// The range the next continuation byte must fall in (narrower after E0, ED, F0, F4).
    private var low: UInt8 = 0x80
    private var high: UInt8 = 0xBF

    public init() {}

    /// True while no sequence is cut in the middle: the text so far ends on a whole character.
    public var isComplete: Bool { needed == 0 }

    /// Takes one byte; false when the text is not UTF-8 (the validator must not be fed again).
    public mutating func feed(_ byte: UInt8) -> Bool {
        if needed > 0 {
            guard byte >= low && byte <= high else { return false }
            needed -= 1
            low = 0x80
            high = 0xBF
            return true
        }
        switch byte {
        case 0x00...0x7F: return true
        case 0xC2...0xDF: needed = 1
        case 0xE0: needed = 2; low = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: needed = 2
        case 0xED: needed = 2; high = 0x9F
        case 0xF0: needed = 3; low = 0x90
        case 0xF1...0xF3: needed = 3
        case 0xF4: needed = 3; high = 0x8F
        default: return false
        }
        return true
    }

    /// Takes a run of bytes; false at the first one that breaks UTF-8.
    public mutating func feed<C: Collection>(_ bytes: C) -> Bool where C.Element == UInt8 {
        for byte in bytes where !feed(byte) { return false }
        return true
    }
}
