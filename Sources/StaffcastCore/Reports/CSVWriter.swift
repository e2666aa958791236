/// Reports as CSV (docs/protocol.md, Reports): RFC 4180 — a header row, fields separated by
/// commas, records ended by CRLF, a field quoted when it holds a comma, a quote, CR or LF, and
/// a quote inside a quoted field doubled. UTF-8. A cell that starts with `=`, `+`, `-`, `@`, a
/// tab or a carriage return (OWASP's list: spreadsheets skip a leading tab or CR and then read
/// the formula) gets a leading `'`, so a spreadsheet shows it as text instead of running it as
/// a formula (CSV injection). Pure.
public struct CSVWriter: Sendable {
    public private(set) var text = ""
    private let columns: Int

    /// Starts a document with its header row.
    public init(header: [String]) {
        columns = header.count
        append(header)
    }

    /// Adds one record (padded or cut to the header's width, so every record has as many
    /// fields as the header).
    public mutating func append(_ row: [String]) {
        var fields = Array(row.prefix(columns))
        while fields.count < columns { fields.append("") }
        text += fields.map(Self.field).joined(separator: ",") + "\r\n"
    }

    /// The UTF-8 bytes of the document.
    public var bytes: [UInt8] { Array(text.utf8) }

    /// The first characters that make a spreadsheet read a cell as a formula.
    static let formulaStarts: Set<Unicode.Scalar> = ["=", "+", "-", "@", "\t", "\r"]

    /// One field: neutralised, then quoted when needed.
    public static func field(_ value: String) -> String {
        var v = value
        if let first = v.unicodeScalars.first, Self.formulaStarts.contains(first) { v = "'" + v }
        let needsQuotes = v.contains(",") || v.contains("\"") || v.contains("\n") || v.contains("\r")
        guard needsQuotes else { return v }
        return "\"" + v.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
