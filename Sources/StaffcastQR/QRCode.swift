import CQREncode
import Foundation

/// A QR code of a text, encoded by libqrencode (the only user of CQREncode). It owns the C
/// `QRcode` only while it copies the modules out, and frees it there; what remains is Swift.
public struct QRCode: Sendable, Equatable {
    /// Modules per side (without the quiet zone).
    public let size: Int
    /// Row-major, `true` for a dark module.
    public let modules: [Bool]

    public enum Failure: Error, Equatable { case empty, tooLong, encoder(Int32) }

    /// Encodes `text` (byte mode, error correction M: readable from a screen or a print-out).
    public init(_ text: String) throws(Failure) {
        guard !text.isEmpty else { throw .empty }
        guard text.utf8.count <= 1_000 else { throw .tooLong }
        let owner = text.withCString { QRcodeOwner(QRcode_encodeString8bit($0, 0, QR_ECLEVEL_M)) }
        guard let code = owner.code else { throw .encoder(errno) }
        let width = Int(code.pointee.width)
        var modules = [Bool](repeating: false, count: width * width)
        for i in 0..<(width * width) {
            modules[i] = code.pointee.data[i] & 1 == 1 // bit 0 of each byte: dark
        }
        size = width
        self.modules = modules
    }

    public func isDark(_ x: Int, _ y: Int) -> Bool {
        x >= 0 && y >= 0 && x < size && y < size && modules[y * size + x]
    }

    /// For a terminal: two module rows per text row with half blocks (▀ ▄ █). Light modules
    /// and the quiet zone are drawn in the terminal's text colour, dark modules left as its
    /// background: the right way round on a dark terminal (phone cameras also read the
    /// inverted code a light terminal shows).
    public func terminalText(quiet: Int = 2) -> String {
        let span = size + 2 * quiet
        var out = ""
        var y = -quiet
        while y < size + quiet {
            for x in -quiet..<(span - quiet) {
                let top = !isDark(x, y), bottom = y + 1 < size + quiet ? !isDark(x, y + 1) : false
                out += top && bottom ? "█" : top ? "▀" : bottom ? "▄" : " "
            }
            out += "\n"
            y += 2
        }
        return out
    }

    /// A standalone SVG: one path of dark unit squares on white, a quiet zone of 4.
    public func svg(quiet: Int = 4) -> String {
        let span = size + 2 * quiet
        var path = ""
        for y in 0..<size {
            var x = 0
            while x < size {
                guard isDark(x, y) else { x += 1; continue }
                var run = 1
                while isDark(x + run, y) { run += 1 }
                path += "M\(x + quiet) \(y + quiet)h\(run)v1h-\(run)z"
                x += run
            }
        }
        return """
            <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 \(span) \(span)" shape-rendering="crispEdges">\
            <rect width="\(span)" height="\(span)" fill="#fff"/><path fill="#000" d="\(path)"/></svg>
            """
    }
}

/// The one owner of a C `QRcode`: frees it when the Swift value goes.
private final class QRcodeOwner {
    let code: UnsafeMutablePointer<QRcode>?
    init(_ code: UnsafeMutablePointer<QRcode>?) { self.code = code }
    deinit { if let code { QRcode_free(code) } }
}
