import Foundation
import StaffcastCore

/// The HTTP API of a staffcast server (docs/protocol.md, HTTP API), called synchronously: one
/// HTTP/1.1 request per connection (`ClientStream`: TCP, or TLS verified against `trust` for
/// `https://`).
public struct APIClient: Sendable {
    public let server: URL
    public let token: String?
    public let timeout: TimeInterval
    public let trust: TLSTrust

    public init(server: String, token: String?, timeout: TimeInterval = 15, trust: TLSTrust = TLSTrust()) throws(ClientError) {
        var text = server
        if text.hasPrefix("ws://") { text = "http://" + text.dropFirst(5) }
        if text.hasPrefix("wss://") { text = "https://" + text.dropFirst(6) }
        guard let url = URL(string: text), url.scheme == "http" || url.scheme == "https", url.host != nil else {
            throw ClientError.badURL(server)
        }
        self.server = url
        self.token = token
        self.timeout = timeout
        self.trust = trust
    }

    /// True when requests go over TLS.
    public var isSecure: Bool { server.scheme == "https" }

    /// True when a token would cross a network in clear text: plain http to a host that is not
    /// this machine (loopback addresses and `localhost` are fine).
    public var sendsTokenInClear: Bool {
        guard token != nil, !isSecure, let host = server.host?.lowercased() else { return false }
        let bare = host.trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        return !(bare == "localhost" || bare.hasSuffix(".localhost") || bare.hasPrefix("127.") || bare == "::1")
    }

    /// The WebSocket URL of the same server.
    public var webSocketURL: String {
        var c = URLComponents(url: server, resolvingAgainstBaseURL: false)!
        c.scheme = server.scheme == "https" ? "wss" : "ws"
        c.path = "/v1/ws"
        return c.string ?? "ws://127.0.0.1:8080/v1/ws"
    }

    public struct Response: Sendable {
        public var status: Int
        public var body: Data
    }

    /// The largest reply read (status pages and message listings are far smaller).
    static let maxReplyBytes = 64 << 20

    /// One request; throws only when the server could not be reached or its reply was unusable.
    public func raw(_ method: String, _ path: String, query: [String: String] = [:], body: Data? = nil,
                    contentType: String? = nil) throws(ClientError) -> Response {
        var c = URLComponents(url: server, resolvingAgainstBaseURL: false)!
        c.path = path
        if !query.isEmpty { c.queryItems = query.sorted { $0.key < $1.key }.map { URLQueryItem(name: $0.key, value: $0.value) } }
        guard let host = c.host, !c.percentEncodedPath.isEmpty else { throw ClientError.badURL(path) }
        let port = c.port ?? (isSecure ? 443 : 80)
        let target = c.percentEncodedPath + (c.percentEncodedQuery.map { "?" + $0 } ?? "")
        let deadline = Date().addingTimeInterval(timeout)
        let stream = try ClientStream(host: host, port: port, tls: isSecure ? trust : nil, timeout: timeout)
        defer { stream.shutdown() }
        let hostHeader = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        var head = "\(method) \(target) HTTP/1.1\r\nHost: \(hostHeader):\(port)\r\nConnection: close\r\n"
        head += "User-Agent: staffcast\r\nAccept: */*\r\n"
        if let token { head += "Authorization: Bearer \(token)\r\n" }
        if let contentType { head += "Content-Type: \(contentType)\r\n" }
        if body != nil || ["POST", "PUT", "PATCH"].contains(method) { head += "Content-Length: \(body?.count ?? 0)\r\n" }
        head += "\r\n"
        try stream.write(Array(head.utf8) + (body.map { [UInt8]($0) } ?? []), deadline: deadline)
        var (status, headers) = try stream.readHead(deadline: deadline)
        while (100..<200).contains(status) { (status, headers) = try stream.readHead(deadline: deadline) } // 100 Continue
        if method == "HEAD" || status == 204 || status == 304 { return Response(status: status, body: Data()) }
        if headers["transfer-encoding"]?.lowercased().contains("chunked") == true {
            return Response(status: status, body: Data(try readChunked(stream, deadline: deadline)))
        }
        if let text = headers["content-length"] {
            guard let length = Int(text), length >= 0, length <= Self.maxReplyBytes else {
                throw ClientError.protocolViolation("bad Content-Length \(text)")
            }
            guard try stream.fill(length, deadline: deadline) else { throw ClientError.timeout }
            return Response(status: status, body: Data(stream.take(length)))
        }
        guard try stream.readToEnd(limit: Self.maxReplyBytes, deadline: deadline) else { throw ClientError.timeout }
        return Response(status: status, body: Data(stream.take(stream.buffer.count)))
    }

    private func readChunked(_ stream: ClientStream, deadline: Date) throws(ClientError) -> [UInt8] {
        var body: [UInt8] = []
        while true {
            let line = try readLine(stream, deadline: deadline)
            let sizeText = line.split(separator: ";", maxSplits: 1).first.map(String.init) ?? ""
            guard let size = Int(sizeText.trimmingCharacters(in: .whitespaces), radix: 16), size >= 0,
                  body.count + size <= Self.maxReplyBytes else {
                throw ClientError.protocolViolation("bad chunk size '\(line)'")
            }
            if size == 0 {
                while try !readLine(stream, deadline: deadline).isEmpty {} // trailers
                return body
            }
            guard try stream.fill(size + 2, deadline: deadline) else { throw ClientError.timeout }
            body += stream.take(size)
            _ = stream.take(2)
        }
    }

    private func readLine(_ stream: ClientStream, deadline: Date) throws(ClientError) -> String {
        while true {
            if let end = stream.buffer.firstRange(of: [13, 10]) {
                let line = String(decoding: stream.buffer[..<end.lowerBound], as: UTF8.self)
                _ = stream.take(end.upperBound)
                return line
            }
            if stream.buffer.count > 8_192 { throw ClientError.protocolViolation("chunk line too long") }
            guard try stream.fill(stream.buffer.count + 1, deadline: deadline) else { throw ClientError.timeout }
        }
    }

    /// `data` decoded as `T`; anything else is a protocol violation ("the reply was not `what`").
    func decode<T: Decodable>(_ type: T.Type, _ data: Data, what: String) throws(ClientError) -> T {
        do {
            return try JSONDecoder().decode(T.self, from: data)
        } catch {
            throw ClientError.protocolViolation("the reply was not \(what)")
        }
    }

    /// `call` with a wire body (its one Codable type, StaffcastCore) as JSON.
    func call<Body: Encodable>(_ method: String, _ path: String, json body: Body) throws(ClientError) -> Data {
        try call(method, path, body: WireJSON.encode(body), contentType: "application/json")
    }

    /// A request whose non-2xx answer becomes `ClientError.server` with the server's sentence.
    public func call(_ method: String, _ path: String, query: [String: String] = [:], body: Data? = nil,
                     contentType: String? = nil) throws(ClientError) -> Data {
        let r = try raw(method, path, query: query, body: body, contentType: contentType)
        guard (200..<300).contains(r.status) else {
            if let error = ErrorBody.decode(r.body) {
                throw ClientError.server(code: error.code, message: error.message, status: r.status)
            }
            throw ClientError.server(code: "http_\(r.status)", message: "the server answered HTTP \(r.status)", status: r.status)
        }
        return r.body
    }

    public func sendMessage(event: UUID, message: String, type: String?, priority: String?,
                            expiresInMinutes: Int?, force: Bool = false,
                            escalateAfterMinutes: Int? = nil, teams: [String] = [],
                            poll: [String]? = nil) throws(ClientError) -> StaffMessage {
        let body = SendBody(message: message, messageType: type, priority: priority, expiresInMinutes: expiresInMinutes,
                            escalateAfterMinutes: escalateAfterMinutes, force: force, teams: teams,
                            poll: poll.map { Poll(unchecked: $0) }) // the server checks it
        let data = try call("POST", "/v1/events/\(event.uuidString.lowercased())/messages",
                            json: body)
        return try decode(StaffMessage.self, data, what: "a Message")
    }
}
