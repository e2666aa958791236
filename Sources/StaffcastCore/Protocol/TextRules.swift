import Foundation

/// What text staffcast stores: anything but control characters, apart from new line, carriage
/// return and tab. (PostgreSQL cannot store NUL in text; a client that sent one used to see
/// its message silently cut at it.)
///
/// One rule for every control character Unicode has, not only ASCII's: C0 (U+0000–U+001F, but
/// tab, line feed and carriage return), DEL (U+007F), C1 (U+0080–U+009F, among them U+0085
/// NEXT LINE) and the line and paragraph separators U+2028 and U+2029. The last ones are
/// refused rather than turned into "\n": a screen that honours them breaks a line where the
/// sender's preview did not, JavaScript before ES2019 could not hold them in a string literal,
/// and refusing keeps what is stored exactly what was sent. A line break is "\n" (or "\r\n").
public enum TextRules {
    /// Whether `scalar` may not be stored.
    public static func isForbidden(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x09, 0x0A, 0x0D: return false
        case 0x00...0x1F, 0x7F...0x9F, 0x2028, 0x2029: return true
        default: return false
        }
    }

    /// Whether `text` can be one URL sent in a request line or header: no control character at
    /// all (not even tab, CR or LF, which would end the line) and no white space.
    public static func isSingleToken(_ text: String) -> Bool {
        !text.unicodeScalars.contains { $0.value <= 0x20 || isForbidden($0) || $0.properties.isWhitespace }
    }

    /// The first control character in `text` that may not be stored, if any.
    public static func forbiddenControlCharacter(in text: String) -> Unicode.Scalar? {
        text.unicodeScalars.first(where: isForbidden)
    }

    /// The rules for the name of a thing named in URL paths (a team, a template): 1 to 100
    /// bytes, no spaces at either end, one line, storable, none of `forbidden`. Throws
    /// `invalid` naming `kind` ("team") and the rule broken.
    public static func requireName(_ name: String, of kind: String, without forbidden: [Character]) throws(StaffcastError) {
        let trimmed = name.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty else { throw .invalid("A \(kind) name must not be empty.") }
        guard trimmed == name else {
            throw .invalid("A \(kind) name must not be empty or start or end with spaces; got '\(name.prefix(40))'.")
        }
        guard name.utf8.count <= 100 else { throw .invalid("A \(kind) name may be at most 100 bytes.") }
        guard !forbidden.contains(where: { name.contains($0) }) else {
            throw .invalid("A \(kind) name may not contain \(forbidden.map { "'\($0)'" }.joined(separator: " or ")).")
        }
        try requireOneLine(name, field: "\(kind) name")
    }

    /// A person's or an event's name, shown one to a line in lists and terminals (receipts,
    /// reach, `watch`): storable, and no new line, carriage return or tab, so that nobody can
    /// add a line of their own to such a list ("Eve\n  ✓ Fake Person" read as two readers).
    /// Bidirectional overrides and isolates (U+202A–U+202E, U+2066–U+2069) are refused there
    /// too: they reorder what follows on the line, so a name could make the rest of a receipt
    /// line read backwards. Right-to-left names need none of them.
    public static func requireOneLine(_ text: String, field: String) throws(StaffcastError) {
        // Not requireStorable's rule: it says new lines and tabs may be sent, which a name may
        // not hold either.
        try requireStorable(text, field: field, rule: "it must be one line of text")
        if text.unicodeScalars.contains(where: { $0 == "\n" || $0 == "\r" || $0 == "\t" }) {
            throw .invalid("The \(field) must be one line (no new lines or tabs). Nothing was stored.")
        }
        if let bidi = text.unicodeScalars.first(where: isBidiControl) {
            throw .invalid("The \(field) contains a text-direction control (U+\(String(format: "%04X", bidi.value))), which would reorder the rest of its line. Nothing was stored.")
        }
    }

    /// The explicit embedding, override and isolate controls of Unicode's bidi algorithm.
    public static func isBidiControl(_ scalar: Unicode.Scalar) -> Bool {
        (0x202A...0x202E).contains(scalar.value) || (0x2066...0x2069).contains(scalar.value)
    }

    /// Throws `invalid`, naming `field` and the character, when `text` holds one.
    public static func requireStorable(_ text: String, field: String,
                                       rule: String = "only text, new lines (\\n) and tabs may be sent") throws(StaffcastError) {
        if let bad = forbiddenControlCharacter(in: text) {
            throw .invalid("The \(field) contains a control character (U+\(String(format: "%04X", bad.value))); \(rule). Nothing was stored.")
        }
    }
}
