import Foundation
import StaffcastClient
#if canImport(Glibc)
import Glibc
#endif

/// HTTP/1.1 on a `RawSocket`: a request's bytes, and reading one response exactly as it comes.
extension RawSocket {
    /// A request's bytes: method, path, `Host`, the headers given, `Content-Length` when there
    /// is a body (unless `contentLength` is false), the body.
    static func request(_ method: String, _ path: String, port: Int, headers: [(String, String)] = [],
                        body: [UInt8]? = nil, contentLength: Bool = true) -> [UInt8] {
        var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if let body, contentLength { head += "Content-Length: \(body.count)\r\n" }
        head += "\r\n"
        return Array(head.utf8) + (body ?? [])
    }

    /// Reads one complete response (head and body: by Content-Length, chunked, or until EOF).
    /// 1xx, 204, 304 and `headOnly` responses have no body; bytes after the response stay in
    /// `buffer` (the next pipelined response, or WebSocket frames after a 101).
    func readResponse(deadline: Date, headOnly: Bool = false) throws -> RawHTTPResponse {
        try read(until: "a complete response head", deadline: deadline) { $0.firstRange(of: [13, 10, 13, 10]) != nil }
        let end = buffer.firstRange(of: [13, 10, 13, 10])!
        let head = String(decoding: buffer[..<end.lowerBound], as: UTF8.self)
        buffer.removeFirst(end.upperBound)
        var lines = head.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst()
        let parts = statusLine.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), let status = Int(parts[1]) else {
            throw RawSocketError("not an HTTP status line: \(statusLine.debugDescription)")
        }
        var headers: [(name: String, value: String)] = []
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else {
                throw RawSocketError("not a header line: \(line.debugDescription) in \(head.debugDescription)")
            }
            headers.append((String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
        }
        var response = RawHTTPResponse(statusLine: statusLine, status: status, headers: headers, body: [])
        if headOnly || (100..<200).contains(status) || status == 204 || status == 304 { return response }
        if response.header("transfer-encoding")?.lowercased().contains("chunked") == true {
            response.body = try readChunkedBody(deadline: deadline)
        } else if let lengthText = response.header("content-length") {
            guard let length = Int(lengthText), length >= 0 else {
                throw RawSocketError("bad Content-Length \(lengthText.debugDescription)")
            }
            try need(length, "the \(length)-byte body of \(statusLine)", deadline: deadline)
            response.body = Array(buffer.prefix(length))
            buffer.removeFirst(length)
        } else {
            // No length: the body ends at EOF.
            while true {
                switch readSome(deadline: deadline) {
                case .data: continue
                case .eof:
                    response.body = buffer
                    buffer.removeAll()
                    return response
                case .timeout: throw RawSocketError("\(statusLine) without a length did not end before the deadline")
                case .reset(let why): throw RawSocketError("\(statusLine) without a length: connection failed (\(why))")
                }
            }
        }
        return response
    }

    private func readChunkedBody(deadline: Date) throws -> [UInt8] {
        var body: [UInt8] = []
        while true {
            try read(until: "a chunk size line", deadline: deadline) { $0.firstRange(of: [13, 10]) != nil }
            let lineEnd = buffer.firstRange(of: [13, 10])!
            let line = String(decoding: buffer[..<lineEnd.lowerBound], as: UTF8.self)
            buffer.removeFirst(lineEnd.upperBound)
            let sizeText = line.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
            guard let size = Int(sizeText, radix: 16), size >= 0 else {
                throw RawSocketError("bad chunk size line \(line.debugDescription)")
            }
            if size == 0 {
                // Trailers, then an empty line.
                while true {
                    try read(until: "the end of the chunked trailers", deadline: deadline) { $0.firstRange(of: [13, 10]) != nil }
                    let end = buffer.firstRange(of: [13, 10])!
                    let empty = end.lowerBound == 0
                    buffer.removeFirst(end.upperBound)
                    if empty { return body }
                }
            }
            try need(size + 2, "a \(size)-byte chunk", deadline: deadline)
            body += buffer.prefix(size)
            guard buffer[size] == 13, buffer[size + 1] == 10 else { throw RawSocketError("a chunk not followed by CRLF") }
            buffer.removeFirst(size + 2)
        }
    }

    /// Opens a connection, sends one GET, reads the response within `timeout`, closes.
    static func get(port: Int, _ path: String, headers: [(String, String)] = [], timeout: TimeInterval) throws -> RawHTTPResponse {
        let deadline = Date().addingTimeInterval(timeout)
        let socket = try RawSocket(port: port, timeout: timeout)
        defer { socket.close() }
        try socket.send(request("GET", path, port: port, headers: headers), timeout: timeout)
        return try socket.readResponse(deadline: deadline)
    }
}
