import Foundation
import StaffcastClient

/// A plain table for the terminal: columns padded to their widest cell.
enum TextTable {
    static func render(header: [String], rows: [[String]]) -> String {
        let all = [header] + rows
        var widths = [Int](repeating: 0, count: header.count)
        for row in all {
            for (i, cell) in row.enumerated() where i < widths.count { widths[i] = max(widths[i], TextWidth.columns(cell)) }
        }
        return all.map { row in
            row.enumerated().map { i, cell in
                // Padded by terminal columns: Foundation's padding(toLength:) counts UTF-16 units,
                // so it cut an emoji in half ("😀…" printed as "😀…\u{FFFD}") in the widest cell.
                i == row.count - 1 ? cell : TextWidth.pad(cell, widths[i])
            }.joined(separator: "  ")
        }.joined(separator: "\n")
    }

    /// `text` on one line (new lines and tabs as spaces), cut to `max` characters with "…".
    static func oneLine(_ text: String, max: Int) -> String {
        let flat = text.map { $0.isNewline || $0 == "\t" ? " " : String($0) }.joined()
        return flat.count > max ? String(flat.prefix(max - 1)) + "…" : flat
    }
}
