import Foundation

/// What text staffcast stores: anything but control characters, apart from new line, carriage
/// return and tab. (PostgreSQL cannot store NUL in text; a client that sent one used to see
/// its message silently cut at it.)
public enum TextRules {
    /// The first control character in `text` that may not be stored, if any.
    public static func forbiddenControlCharacter(in text: String) -> Unicode.Scalar? {
        text.unicodeScalars.first { ($0.value < 0x20 && $0 != "\n" && $0 != "\r" && $0 != "\t") || $0.value == 0x7F }
    }

    /// Throws `invalid`, naming `field` and the character, when `text` holds one.
    public static func requireStorable(_ text: String, field: String) throws(StaffcastError) {
        if let bad = forbiddenControlCharacter(in: text) {
            throw .invalid("The \(field) contains a control character (U+\(String(format: "%04X", bad.value))); only text, new lines and tabs may be sent. Nothing was stored.")
        }
    }
}
