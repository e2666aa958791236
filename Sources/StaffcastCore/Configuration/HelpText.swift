/// `--help` text that reads well in an 80-column terminal. swift-argument-parser wraps each
/// line longer than the terminal on its own, so one long source line became a full line and an
/// orphan of two words; text wrapped here, before the parser sees it, is left alone. Pure.
public enum HelpText {
    /// Columns every line of `--help` prose keeps within (an 80-column terminal, less one).
    public static let width = 79

    /// `text` broken at spaces into lines of at most `width` columns, each after `indent`
    /// spaces. A word longer than a line stands alone on its line rather than being cut.
    public static func wrap(_ text: String, indent: Int = 0, width: Int = HelpText.width) -> String {
        let pad = String(repeating: " ", count: indent)
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ", omittingEmptySubsequences: true) {
            if line.isEmpty {
                line = pad + word
            } else if line.count + 1 + word.count <= width {
                line += " " + word
            } else {
                lines.append(line)
                line = pad + word
            }
        }
        if !line.isEmpty { lines.append(line) }
        return lines.joined(separator: "\n")
    }
}
