import Foundation

/// How team and zone names are compared, one rule for both (docs/protocol.md, Teams and zones).
/// Look-alike names used to be separate teams: "Café" composed and decomposed, "Security" and
/// "security", "Secu\u{200B}rity" with a zero-width space, "Gate\u{A0}3" with a no-break space
/// beside the zone "Gate 3". A name is stored and looked up `normalize`d; a new one holding an
/// invisible format character is refused, and one equal to an existing name of the event but
/// for case `clashes` with it. Other scripts (Cyrillic "Ѕecurity") are names of their own.
public enum TeamName {
    /// Unicode NFC; every space character (Unicode Zs: no-break, thin, ideographic…) a plain
    /// space, runs of them one, none at either end. Lookups (send `teams`, member add, check-in)
    /// use it too, so any spelling of a name finds the team.
    public static func normalize(_ name: String) -> String {
        var out = String.UnicodeScalarView()
        var pendingSpace = false
        for scalar in name.precomposedStringWithCanonicalMapping.unicodeScalars {
            if scalar.properties.generalCategory == .spaceSeparator {
                pendingSpace = !out.isEmpty
                continue
            }
            if pendingSpace { out.append(" ") }
            pendingSpace = false
            out.append(scalar)
        }
        return String(out)
    }

    /// A new team's or zone's name as it is stored: `normalize`d, valid (`Team.validateName`),
    /// and without invisible format characters (Unicode Cf: zero-width space and joiners,
    /// text-direction controls, soft hyphen…), which make two names look alike. Throws `invalid`.
    /// The one exception is a zero-width joiner inside an emoji sequence ("👩‍🚒 Fire crew"),
    /// which is how such an emoji is written and hides nothing.
    public static func validatedNew(_ name: String) throws(StaffcastError) -> String {
        let normalized = normalize(name)
        try Team.validateName(normalized)
        let scalars = Array(normalized.unicodeScalars)
        let hidden = scalars.indices.first { i in
            scalars[i].properties.generalCategory == .format && !joinsEmoji(scalars, at: i)
        }.map { scalars[$0] }
        if let hidden {
            throw .invalid("A team or zone name may not contain invisible characters such as U+\(String(format: "%04X", hidden.value)) (zero-width spaces and joiners, text-direction controls): they make two names look the same. Nothing was stored.")
        }
        return normalized
    }

    /// A zero-width joiner between two emoji (a variation selector or skin tone may stand before
    /// it): part of one emoji, as in 👩‍🚒. ASCII digits, `#` and `*` count as emoji in Unicode
    /// (keycaps) but not here, so "1‍2" is still refused.
    static func joinsEmoji(_ scalars: [Unicode.Scalar], at i: Int) -> Bool {
        guard scalars[i].value == 0x200D, i > 0, i + 1 < scalars.count else { return false }
        func isEmoji(_ s: Unicode.Scalar) -> Bool { s.value > 0x7F && s.properties.isEmoji }
        var before = i - 1
        while before > 0, scalars[before].value == 0xFE0F || scalars[before].properties.isEmojiModifier { before -= 1 }
        return isEmoji(scalars[before]) && isEmoji(scalars[i + 1])
    }

    /// Whether `a` and `b` name the same team: equal once normalized, ignoring case.
    public static func clashes(_ a: String, _ b: String) -> Bool {
        normalize(a).lowercased() == normalize(b).lowercased()
    }
}
