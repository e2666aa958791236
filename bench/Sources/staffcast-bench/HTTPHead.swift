import Foundation

/// The head of an HTTP response at the front of a buffer.
struct HTTPHead {
    var status: Int
    var headLength: Int
    var contentLength: Int?
    var chunked: Bool
    var close: Bool

    static func parse(_ bytes: [UInt8]) -> HTTPHead? {
        bytes.withUnsafeBufferPointer { parse($0.baseAddress!, $0.count) }
    }

    static func parse(_ p: UnsafePointer<UInt8>, _ n: Int) -> HTTPHead? {
        let end = Needles.headEnd.find(p, n)
        guard end >= 12 else { return nil }
        let head = String(decoding: UnsafeBufferPointer(start: p, count: end), as: UTF8.self).lowercased()
        let lines = head.split(separator: "\r\n")
        guard let first = lines.first, first.hasPrefix("http/1."), first.count >= 12,
              let status = Int(first.dropFirst(9).prefix(3)) else { return nil }
        var h = HTTPHead(status: status, headLength: end + 4, contentLength: nil, chunked: false, close: false)
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].trimmingCharacters(in: .whitespaces)
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            switch name {
            case "content-length": h.contentLength = Int(value)
            case "transfer-encoding": h.chunked = value.contains("chunked")
            case "connection": h.close = value.contains("close")
            default: break
            }
        }
        return h
    }
}
