/// A complete HTTP request: its head and its (de-chunked) body.
public struct HTTPRequest: Sendable, Equatable {
    public var head: HTTPRequestHead
    public var body: [UInt8]
    public init(head: HTTPRequestHead, body: [UInt8]) {
        self.head = head
        self.body = body
    }
}

/// A request the server refuses to read further: the status to answer, then the connection
/// is closed (what follows on it cannot be framed).
public struct HTTPParseError: Error, Sendable, Equatable {
    public var status: Int
    public var message: String
    public init(status: Int, _ message: String) {
        self.status = status
        self.message = message
    }
}

/// What `HTTPRequestParser.parse` found at the front of a connection's buffer.
public enum HTTPParseResult: Sendable, Equatable {
    /// The head is not complete yet.
    case needMore
    /// The head is complete, the body is not (answer `100 Continue` if it asks, and wait).
    case incompleteBody(HTTPRequestHead)
    /// A whole request, which took the first `consumed` bytes; what follows is the next one.
    case request(HTTPRequest, consumed: Int)
    /// A WebSocket upgrade request whose head is the first `headLength` bytes.
    case upgrade(HTTPRequestHead, headLength: Int)
    case failure(HTTPParseError)
}

/// HTTP/1.1 request framing (RFC 9112) for the API: request line, headers, and a body framed
/// by `Content-Length` or `Transfer-Encoding: chunked`. Pure: it looks at bytes and says what
/// they are; the transport owns the buffer, the socket and the deadlines.
///
/// Hand-written, not taken from a library, because it sits in front of libwebsockets: an
/// upgrade request must be recognised and its exact bytes handed on to libwebsockets, and
/// keep-alive requests pipelined on one connection must be framed one after another. (The
/// HTTP server inside Debian's libwebsockets 4.1.6 spins on pipelined request bodies.)
public struct HTTPRequestParser: Sendable {
    public var maxHeadBytes: Int
    public var maxBodyBytes: Int

    public init(maxHeadBytes: Int = 8_192, maxBodyBytes: Int = Limits.maxFrameBytes) {
        self.maxHeadBytes = maxHeadBytes
        self.maxBodyBytes = maxBodyBytes
    }

    public func parse(_ buffer: [UInt8]) -> HTTPParseResult {
        buffer.withUnsafeBufferPointer { parse($0) }
    }

    public func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> HTTPParseResult {
        // Tolerate empty lines before a request line (RFC 9112 §2.2).
        var start = 0
        while start + 1 < bytes.count, bytes[start] == 0x0D, bytes[start + 1] == 0x0A { start += 2 }
        // The head, with its final CRLF CRLF, is at most `maxHeadBytes` (however the bytes arrive).
        guard let headEnd = Self.find(crlfcrlf: bytes, from: start, limit: start + maxHeadBytes - 4) else {
            if bytes.count - start >= maxHeadBytes {
                return .failure(HTTPParseError(status: 431, "The request head is larger than \(maxHeadBytes) bytes."))
            }
            // Lines ended by a lone LF never make the CRLF CRLF awaited: refused now, not with a
            // 408 after `header_timeout` (attack round).
            if Self.hasLoneLineFeed(bytes, from: start, upTo: min(bytes.count, start + maxHeadBytes)) {
                return .failure(HTTPParseError(status: 400, "The request's lines must end with CR LF, not a lone LF."))
            }
            return .needMore
        }
        let head: HTTPRequestHead
        switch Self.parseHead(UnsafeBufferPointer(rebasing: bytes[start..<headEnd])) {
        case .success(let h): head = h
        case .failure(let e): return .failure(e)
        }
        let bodyStart = headEnd + 4
        // Framing is judged before anything else, upgrades included: a proxy in front that
        // frames a body differently from us is how requests are smuggled (RFC 9112 §11.2).
        let chunked: Bool
        switch Self.transferEncoding(head) {
        case .failure(let e): return .failure(e)
        case .success(let c): chunked = c
        }
        if head.isWebSocketUpgrade { return .upgrade(head, headLength: bodyStart) }

        if chunked {
            switch dechunk(bytes, from: bodyStart) {
            case .needMore: return .incompleteBody(head)
            case .failure(let e): return .failure(e)
            case .done(let body, let end): return .request(HTTPRequest(head: head, body: body), consumed: end)
            }
        }
        var length = 0
        let lengths = head.headers.filter { $0.name == "content-length" }.map(\.value)
        if let first = lengths.first {
            guard lengths.allSatisfy({ $0 == first }), let n = Int(first.trimmingSpaces), n >= 0,
                  first.trimmingSpaces.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
                return .failure(HTTPParseError(status: 400, "Content-Length is not a number."))
            }
            length = n
        }
        guard length <= maxBodyBytes else {
            return .failure(HTTPParseError(status: 413, "The body is \(length) bytes; the limit is \(maxBodyBytes)."))
        }
        guard bytes.count - bodyStart >= length else { return .incompleteBody(head) }
        let body = Array(bytes[bodyStart..<(bodyStart + length)])
        return .request(HTTPRequest(head: head, body: body), consumed: bodyStart + length)
    }

    // MARK: framing

    /// The one refusal for every `Transfer-Encoding` but a single header saying `chunked`,
    /// however it is spelt or split (two headers, `chunked, identity`, `identity`, `gzip`):
    /// a proxy could read any of those differently, so none is guessed at.
    public static let transferEncodingRefusal = HTTPParseError(status: 400,
        "Transfer-Encoding must be exactly one header saying 'chunked'; send Content-Length instead. Nothing was stored.")

    /// Whether the body is chunked; a failure for any other `Transfer-Encoding`, for one next
    /// to `Content-Length`, and for one in an HTTP/1.0 request (RFC 9112 §6.1).
    static func transferEncoding(_ head: HTTPRequestHead) -> Result<Bool, HTTPParseError> {
        let encodings = head.headers.filter { $0.name == "transfer-encoding" }
        guard let only = encodings.first else { return .success(false) }
        guard encodings.count == 1, only.value.lowercased() == "chunked" else { return .failure(transferEncodingRefusal) }
        guard head.isHTTP11 else {
            return .failure(HTTPParseError(status: 400, "HTTP/1.0 requests may not use Transfer-Encoding; send Content-Length instead."))
        }
        guard head.header("content-length") == nil else {
            return .failure(HTTPParseError(status: 400, "A request may not carry both Content-Length and Transfer-Encoding."))
        }
        return .success(true)
    }

    /// `tchar` of RFC 9110 §5.6.2: what a header name (a token) is made of.
    static func isTokenCharacter(_ c: UInt8) -> Bool {
        switch c {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: return true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"), UInt8(ascii: "'"),
             UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "^"), UInt8(ascii: "_"),
             UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"): return true
        default: return false
        }
    }

    /// A control byte, which no request line or header value may hold (RFC 9110 §5.5: values
    /// are visible characters, obs-text, spaces and tabs; a lone CR or LF is not a line end).
    static func isControl(_ c: UInt8) -> Bool { c < 0x20 || c == 0x7F }

    // MARK: head

    /// Parses a request line and headers (without the final CRLF CRLF). Works on bytes: no
    /// Foundation string searching on the accept path of a reconnect storm.
    static func parseHead(_ bytes: UnsafeBufferPointer<UInt8>) -> Result<HTTPRequestHead, HTTPParseError> {
        // Split at CRLF.
        var lines: [Range<Int>] = []
        var lineStart = 0
        var i = 0
        while i < bytes.count {
            if bytes[i] == 0x0D, i + 1 < bytes.count, bytes[i + 1] == 0x0A {
                lines.append(lineStart..<i)
                i += 2
                lineStart = i
            } else {
                i += 1
            }
        }
        lines.append(lineStart..<bytes.count)
        func text(_ r: Range<Int>) -> String { String(decoding: UnsafeBufferPointer(rebasing: bytes[r]), as: UTF8.self) }

        let requestLine = lines[0]
        if requestLine.contains(where: { isControl(bytes[$0]) }) {
            return .failure(HTTPParseError(status: 400, "The request line contains a control character."))
        }
        // The two spaces of "METHOD /target HTTP/1.1" (a third is an error).
        var spaces = (first: -1, second: -1)
        var spaceCount = 0
        for j in requestLine where bytes[j] == 0x20 {
            spaceCount += 1
            if spaceCount == 1 { spaces.first = j } else if spaceCount == 2 { spaces.second = j }
        }
        guard spaceCount == 2, spaces.first > requestLine.lowerBound,
              bytes[requestLine.lowerBound..<spaces.first].allSatisfy({ $0 >= 0x41 && $0 <= 0x5A }) else {
            return .failure(HTTPParseError(status: 400, "The request line is not 'METHOD /path HTTP/1.1'."))
        }
        let versionBytes = UnsafeBufferPointer(rebasing: bytes[(spaces.second + 1)..<requestLine.upperBound])
        let isHTTP11 = versionBytes.elementsEqual(Self.http11)
        guard isHTTP11 || versionBytes.elementsEqual(Self.http10) else {
            return .failure(HTTPParseError(status: 505, "Only HTTP/1.0 and HTTP/1.1 are served here."))
        }
        let target = text((spaces.first + 1)..<spaces.second)
        guard target.utf8.first == UInt8(ascii: "/") else {
            return .failure(HTTPParseError(status: 400, "The request target must be a path starting with '/'."))
        }
        var path = Substring(target)
        var query: [String: String] = [:]
        if let q = target.utf8.firstIndex(of: UInt8(ascii: "?")) {
            path = target[..<q]
            for pair in target[target.index(after: q)...].split(separator: "&") where !pair.isEmpty {
                let eq = pair.firstIndex(of: "=")
                let name = percentDecode(eq.map { pair[..<$0] } ?? pair[...])
                // A name given twice is refused, not last-wins: ?priority=low&priority=urgent
                // was sent urgent, and the two parts of a request may come from different places.
                guard query[name] == nil else {
                    return .failure(HTTPParseError(status: 400, "The query names '\(name.prefix(40))' twice; give each parameter once."))
                }
                query[name] = eq.map { percentDecode(pair[pair.index(after: $0)...]) } ?? ""
            }
        }
        var headers: [(name: String, value: String)] = []
        headers.reserveCapacity(lines.count - 1)
        for line in lines.dropFirst() {
            guard let colon = line.first(where: { bytes[$0] == UInt8(ascii: ":") }), colon > line.lowerBound else {
                return .failure(HTTPParseError(status: 400, "A header line has no name: '\(text(line).prefix(40))'."))
            }
            for j in line.lowerBound..<colon {
                let c = bytes[j]
                if c == 0x20 || c == 0x09 { return .failure(HTTPParseError(status: 400, "A header name contains white space.")) }
                guard isTokenCharacter(c) else {
                    return .failure(HTTPParseError(status: 400, "A header name contains a character other than letters, digits and !#$%&'*+-.^_`|~."))
                }
            }
            // Lower-cased straight into the string (names are ASCII tokens; most fit a small
            // string, so no allocation on the accept path of a storm).
            let name = String(unsafeUninitializedCapacity: colon - line.lowerBound) { out in
                for j in line.lowerBound..<colon {
                    let c = bytes[j]
                    out[j - line.lowerBound] = c >= 0x41 && c <= 0x5A ? c + 0x20 : c
                }
                return colon - line.lowerBound
            }
            var from = colon + 1
            var to = line.upperBound
            while from < to, bytes[from] == 0x20 || bytes[from] == 0x09 { from += 1 }
            while to > from, bytes[to - 1] == 0x20 || bytes[to - 1] == 0x09 { to -= 1 }
            // Tabs inside a value are allowed; every other control byte is refused.
            if (from..<to).contains(where: { bytes[$0] != 0x09 && isControl(bytes[$0]) }) {
                return .failure(HTTPParseError(status: 400, "The value of a header contains a control character."))
            }
            headers.append((name, text(from..<to)))
        }
        if isHTTP11, !headers.contains(where: { $0.name == "host" }) {
            return .failure(HTTPParseError(status: 400, "HTTP/1.1 requests must carry a Host header."))
        }
        return .success(HTTPRequestHead(method: text(requestLine.lowerBound..<spaces.first), path: String(path), query: query,
                                        isHTTP11: isHTTP11, headers: headers))
    }

    static let http11 = Array("HTTP/1.1".utf8)
    static let http10 = Array("HTTP/1.0".utf8)

    static func percentDecode(_ s: Substring) -> String {
        // Most parameters (ids, numbers) hold nothing to decode.
        if !s.utf8.contains(where: { $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: "+") }) { return String(s) }
        var out: [UInt8] = []
        out.reserveCapacity(s.utf8.count)
        var it = Array(s.utf8)[...]
        while let c = it.popFirst() {
            if c == UInt8(ascii: "+") {
                out.append(0x20)
            } else if c == UInt8(ascii: "%"), it.count >= 2, let h = HexDigit.value(it[it.startIndex]), let l = HexDigit.value(it[it.startIndex + 1]) {
                out.append(h << 4 | l)
                it = it.dropFirst(2)
            } else {
                out.append(c)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    static func hasLoneLineFeed(_ bytes: UnsafeBufferPointer<UInt8>, from: Int, upTo end: Int) -> Bool {
        var i = from
        while i < end {
            if bytes[i] == 0x0A, i == from || bytes[i - 1] != 0x0D { return true }
            i += 1
        }
        return false
    }

    static func find(crlfcrlf bytes: UnsafeBufferPointer<UInt8>, from: Int, limit: Int) -> Int? {
        var i = from
        let end = min(bytes.count, limit + 4) - 3
        while i < end {
            if bytes[i] == 0x0D, bytes[i + 1] == 0x0A, bytes[i + 2] == 0x0D, bytes[i + 3] == 0x0A { return i }
            i += 1
        }
        return nil
    }

    // MARK: chunked bodies

    enum Dechunked {
        case needMore
        case failure(HTTPParseError)
        case done([UInt8], end: Int)
    }

    func dechunk(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Dechunked {
        var body: [UInt8] = []
        var i = start
        func line(from: Int) -> (Substring, next: Int)? {
            var j = from
            while j + 1 < bytes.count {
                if bytes[j] == 0x0D && bytes[j + 1] == 0x0A {
                    return (Substring(String(decoding: UnsafeBufferPointer(rebasing: bytes[from..<j]), as: UTF8.self)), j + 2)
                }
                if j - from > 1_024 { return nil }
                j += 1
            }
            return nil
        }
        while true {
            guard let (sizeLine, next) = line(from: i) else {
                // `line` finds a CRLF up to 1,025 bytes in: only 1,027 bytes without one are too long.
                return bytes.count - i > 1_026 ? .failure(HTTPParseError(status: 400, "A chunk size line is too long.")) : .needMore
            }
            let hex = sizeLine.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false).first.map { String($0).trimmingSpaces } ?? ""
            // Hex digits only: `Int(_:radix:)` also takes a sign, and "-2" made a negative size.
            guard !hex.isEmpty, hex.count <= 8, hex.utf8.allSatisfy({ HexDigit.value($0) != nil }), let size = Int(hex, radix: 16) else {
                return .failure(HTTPParseError(status: 400, "A chunk size is not a hexadecimal number."))
            }
            i = next
            if size == 0 {
                // Trailers, up to an empty line; bounded like a head.
                let trailersStart = i
                while true {
                    guard let (trailer, after) = line(from: i) else {
                        if bytes.count - trailersStart > maxHeadBytes {
                            return .failure(HTTPParseError(status: 431, "The trailers are larger than \(maxHeadBytes) bytes."))
                        }
                        return bytes.count - i > 1_026 ? .failure(HTTPParseError(status: 431, "A trailer line is too long.")) : .needMore
                    }
                    i = after
                    if i - trailersStart > maxHeadBytes {
                        return .failure(HTTPParseError(status: 431, "The trailers are larger than \(maxHeadBytes) bytes."))
                    }
                    if trailer.isEmpty { return .done(body, end: i) }
                }
            }
            guard body.count + size <= maxBodyBytes else {
                return .failure(HTTPParseError(status: 413, "The body is larger than \(maxBodyBytes) bytes."))
            }
            guard bytes.count >= i + size + 2 else { return .needMore }
            guard bytes[i + size] == 0x0D, bytes[i + size + 1] == 0x0A else {
                return .failure(HTTPParseError(status: 400, "A chunk is longer than its size says."))
            }
            body.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[i..<(i + size)]))
            i += size + 2
        }
    }
}
