/// Terminal columns taken by text: East Asian wide and fullwidth characters and emoji take
/// two, combining marks and joiners none, the rest one. Pure Swift (Unicode properties plus the
/// East Asian Width ranges), so it does not depend on the process locale.
public enum TextWidth {
    private static let wide: [ClosedRange<UInt32>] = [
        0x1100...0x115F, 0x231A...0x231B, 0x2329...0x232A, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF,
        0x4E00...0x9FFF, 0xA000...0xA4CF, 0xA960...0xA97F, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE10...0xFE19,
        0xFE30...0xFE6F, 0xFF00...0xFF60, 0xFFE0...0xFFE6, 0x1F300...0x1F64F, 0x1F900...0x1F9FF,
        0x20000...0x2FFFD, 0x30000...0x3FFFD,
    ]

    static func columns(_ scalar: Unicode.Scalar) -> Int {
        let v = scalar.value
        if v == 0 || v == 0x200B || v == 0x200D || (0xFE00...0xFE0F).contains(v) { return 0 }
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .format, .control: return 0
        default: break
        }
        if scalar.properties.isEmojiPresentation { return 2 }
        return wide.contains { $0.contains(v) } ? 2 : 1
    }

    /// Columns of one grapheme: its first scalar's width, or 2 for an emoji sequence.
    public static func columns(_ c: Character) -> Int {
        guard let first = c.unicodeScalars.first else { return 0 }
        let base = columns(first)
        if c.unicodeScalars.contains(where: { $0.value == 0xFE0F }) && first.properties.isEmoji { return 2 }
        return base
    }

    public static func columns(_ s: String) -> Int { s.reduce(0) { $0 + columns($1) } }

    /// The longest prefix of `s` that fits in `width` columns, with "…" when cut.
    public static func fit(_ s: String, _ width: Int) -> String {
        guard width > 0 else { return "" }
        if columns(s) <= width { return s }
        var out = ""
        var used = 0
        for c in s {
            let w = columns(c)
            if used + w > width - 1 { break }
            out.append(c)
            used += w
        }
        return out + "…"
    }

    /// `s` fitted and padded with spaces to exactly `width` columns.
    public static func pad(_ s: String, _ width: Int) -> String {
        let f = fit(s, width)
        return f + String(repeating: " ", count: max(0, width - columns(f)))
    }
}
