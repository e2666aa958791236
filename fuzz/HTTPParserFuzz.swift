// libFuzzer target: HTTP/1.1 request framing (HTTPRequestParser, HTTPRequestHead). Built by
// scripts/fuzz.sh together with the sources of StaffcastCore into one module, so no
// `import StaffcastCore`.
//
// Each input is one connection's buffer. It is framed the way the transport frames it: parse,
// drop `consumed`, parse again, until the parser wants more, refuses, or hands over an upgrade;
// with the server's limits and with tiny ones (so that 413/431 are reached by short inputs).
// Besides "never traps", it checks the framing promises: `consumed` and `headLength` lie inside
// the buffer, a body respects the limit, a refusal is a 4xx/5xx with a sentence, a request
// framed from a buffer is framed the same from exactly its own bytes, and any shorter prefix
// of them only asks for more (bytes that trickle in are framed like bytes that arrive at once).
// Every head's derived values (bearer token, keep-alive, upgrade) are computed.

private let fuzzServerParser = HTTPRequestParser()
private let fuzzTinyParser = HTTPRequestParser(maxHeadBytes: 128, maxBodyBytes: 32)

@_cdecl("LLVMFuzzerTestOneInput")
public func staffcastFuzzHTTPParser(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = size == 0 ? [] : Array(UnsafeBufferPointer(start: data, count: size))
    fuzzPipeline(bytes, fuzzServerParser)
    fuzzPipeline(bytes, fuzzTinyParser)
    return 0
}

/// Frames `buffer` request after request, as one keep-alive connection would.
func fuzzPipeline(_ buffer: [UInt8], _ parser: HTTPRequestParser) {
    var rest = buffer
    var requests = 0
    while true {
        let result = parser.parse(rest)
        fuzzCheck(result, of: rest, parser)
        guard case .request(_, let consumed) = result else { return }
        rest.removeFirst(consumed)
        requests += 1
        // Each request takes at least a request line and CRLF CRLF, so this cannot loop forever.
        fuzzRequire(requests <= buffer.count, "more requests than bytes")
    }
}

func fuzzCheck(_ result: HTTPParseResult, of buffer: [UInt8], _ parser: HTTPRequestParser) {
    switch result {
    case .needMore:
        break
    case .incompleteBody(let head):
        fuzzCheckHead(head)
    case .request(let request, let consumed):
        fuzzRequire(consumed >= 4 && consumed <= buffer.count, "consumed \(consumed) of \(buffer.count) bytes")
        fuzzRequire(request.body.count <= parser.maxBodyBytes, "body of \(request.body.count) bytes over the limit")
        fuzzRequire(!request.head.isWebSocketUpgrade, "an upgrade framed as a request")
        fuzzCheckHead(request.head)
        fuzzCheckPrefixes(result, consumed, of: buffer, parser)
    case .upgrade(let head, let headLength):
        fuzzRequire(headLength >= 4 && headLength <= buffer.count, "headLength \(headLength) of \(buffer.count) bytes")
        fuzzRequire(head.isWebSocketUpgrade, "a non-upgrade handed over as an upgrade")
        fuzzRequire(buffer[headLength - 4..<headLength].elementsEqual([0x0D, 0x0A, 0x0D, 0x0A]), "headLength not after CRLF CRLF")
        fuzzCheckHead(head)
        fuzzCheckPrefixes(result, headLength, of: buffer, parser)
    case .failure(let error):
        fuzzRequire((400...599).contains(error.status), "status \(error.status)")
        fuzzRequire(!error.message.isEmpty, "a refusal without a sentence")
    }
}

/// The request (or upgrade) framed from `buffer` is framed the same from its own `length`
/// bytes, and a few shorter prefixes of them only ask for more.
func fuzzCheckPrefixes(_ result: HTTPParseResult, _ length: Int, of buffer: [UInt8], _ parser: HTTPRequestParser) {
    if length < buffer.count {
        fuzzRequire(parser.parse(Array(buffer[..<length])) == result, "framed differently without the bytes after it")
    }
    for cut in Set([0, length / 3, length / 2, length - 1]) where cut < length {
        switch parser.parse(Array(buffer[..<cut])) {
        case .needMore, .incompleteBody: break
        case let other: fuzzRequire(false, "a prefix of \(cut) of \(length) bytes gave \(other)")
        }
    }
}

func fuzzCheckHead(_ head: HTTPRequestHead) {
    fuzzRequire(!head.method.isEmpty && head.method.utf8.allSatisfy({ $0 >= 0x41 && $0 <= 0x5A }), "method '\(head.method)'")
    fuzzRequire(head.path.utf8.first == UInt8(ascii: "/"), "path '\(head.path)'")
    fuzzRequire(!head.path.utf8.contains(UInt8(ascii: "?")), "query left in path '\(head.path)'")
    for (name, value) in head.headers {
        fuzzRequire(!name.isEmpty, "empty header name")
        fuzzRequire(!name.utf8.contains(where: { ($0 >= 0x41 && $0 <= 0x5A) || $0 == 0x20 || $0 == 0x09 }), "header name '\(name)'")
        fuzzRequire(name.utf8.allSatisfy(HTTPRequestParser.isTokenCharacter), "header name '\(name)' is not a token")
        fuzzRequire(value.utf8.first != 0x20 && value.utf8.last != 0x20, "header value not trimmed")
        fuzzRequire(!value.utf8.contains(where: { $0 != 0x09 && HTTPRequestParser.isControl($0) }), "a control byte in '\(name)'")
    }
    // Framing that a proxy could read otherwise never passes: at most one Transfer-Encoding,
    // exactly `chunked`, never beside Content-Length, never in HTTP/1.0.
    let encodings = head.headers.filter { $0.name == "transfer-encoding" }
    fuzzRequire(encodings.count <= 1, "\(encodings.count) Transfer-Encoding headers accepted")
    if let te = encodings.first {
        fuzzRequire(te.value.lowercased() == "chunked", "Transfer-Encoding '\(te.value)' accepted")
        fuzzRequire(head.header("content-length") == nil, "Transfer-Encoding with Content-Length accepted")
        fuzzRequire(head.isHTTP11, "Transfer-Encoding in HTTP/1.0 accepted")
    }
    fuzzRequire(!head.path.utf8.contains(where: HTTPRequestParser.isControl), "a control byte in the path")
    if head.isHTTP11 { fuzzRequire(head.header("host") != nil, "HTTP/1.1 without Host") }
    let token = head.bearerToken
    if head.header("authorization") != nil { fuzzRequire(token != nil, "an Authorization header ignored") }
    _ = head.keepAlive
    _ = head.isWebSocketUpgrade
    _ = head.header("content-type")
    _ = head == head
}

/// A broken promise is a crash: libFuzzer keeps the input and prints the stack.
func fuzzRequire(_ condition: Bool, _ what: @autoclosure () -> String) {
    if !condition { fatalError("fuzz invariant broken: \(what())") }
}
