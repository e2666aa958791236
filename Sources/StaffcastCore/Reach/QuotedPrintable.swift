/// Quoted-printable (RFC 2045 §6.7) for an email body: every line of the result is at most 76
/// characters and plain ASCII, whatever the text (an emergency pasted as one 5,000-byte line,
/// any script), so no SMTP server refuses it for a line over RFC 5322's 998. Pure.
public enum QuotedPrintable {
    /// The longest encoded line, soft break `=` included.
    public static let maxLineLength = 76

    /// `text` (UTF-8; its lines split at "\n", a "\r" before it dropped) encoded, lines joined
    /// with CRLF. A "." that would start a line is written `=2E`, so no line can end the SMTP
    /// data early or need dot-stuffing.
    public static func encode(_ text: String) -> String {
        var out: [String] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let bytes = Array(line.utf8.last == 0x0D ? line.utf8.dropLast() : line.utf8[...])
            out.append(contentsOf: encodeLine(bytes))
        }
        return out.joined(separator: "\r\n")
    }

    /// One line of text as one or more encoded lines (all but the last end in a soft break).
    static func encodeLine(_ bytes: [UInt8]) -> [String] {
        var lines: [String] = []
        var current = ""
        for (i, byte) in bytes.enumerated() {
            let last = i == bytes.count - 1
            // Literal: printable ASCII but "=", and space or tab unless they end the line (a
            // trailing blank may be stripped in transit).
            let literal = (byte >= 33 && byte <= 126 && byte != 0x3D) || ((byte == 0x20 || byte == 0x09) && !last)
            var piece = literal ? String(UnicodeScalar(byte)) : escape(byte)
            // Room for the piece and, unless it ends the line, a soft break after it.
            if current.utf8.count + piece.utf8.count > maxLineLength - (last ? 0 : 1) {
                lines.append(current + "=")
                current = ""
            }
            if current.isEmpty && piece == "." { piece = escape(byte) }
            current += piece
        }
        lines.append(current)
        return lines
    }

    private static func escape(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return "=" + String(digits[Int(byte >> 4)]) + String(digits[Int(byte & 0x0F)])
    }
}
