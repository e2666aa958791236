/// The head of one HTTP/1.x request: request line and headers, names lower-cased.
public struct HTTPRequestHead: Sendable, Equatable {
    public var method: String
    /// The path without the query, as sent (not percent-decoded: routes are ASCII).
    public var path: String
    /// Query parameters, percent- and `+`-decoded; a repeated name keeps its last value.
    public var query: [String: String]
    /// True for HTTP/1.1 (keep-alive unless `Connection: close`); false for HTTP/1.0.
    public var isHTTP11: Bool
    public var headers: [(name: String, value: String)]

    public init(method: String, path: String, query: [String: String], isHTTP11: Bool, headers: [(name: String, value: String)]) {
        self.method = method
        self.path = path
        self.query = query
        self.isHTTP11 = isHTTP11
        self.headers = headers
    }

    /// The first value of header `name` (lower-case).
    public func header(_ name: String) -> String? {
        headers.first { $0.name == name }?.value
    }

    /// Whether the connection stays open after the answer.
    public var keepAlive: Bool {
        let connection = header("connection")?.lowercased() ?? ""
        if isHTTP11 { return !connection.contains("close") }
        return connection.contains("keep-alive")
    }

    /// A WebSocket upgrade request (`Upgrade: websocket` with `Connection: upgrade`).
    public var isWebSocketUpgrade: Bool {
        header("upgrade")?.lowercased() == "websocket" && (header("connection")?.lowercased().contains("upgrade") ?? false)
    }

    /// The bearer token: `Authorization: Bearer …`, else `?access_token=…`, else (for
    /// browsers, which can set neither header nor keep a token out of the URL otherwise) a
    /// WebSocket subprotocol `staffcast.bearer.TOKEN` offered next to `staffcast.v1`. An
    /// Authorization header of another scheme (or a bearer with nothing after it) gives "",
    /// never nil, so it is refused rather than ignored.
    public var bearerToken: String? {
        if let auth = header("authorization") {
            let parts = auth.split(separator: " ", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == "bearer" {
                return String(parts[1]).trimmingSpaces
            }
            return ""
        }
        if let token = query["access_token"] { return token }
        if let offered = header("sec-websocket-protocol") {
            for name in offered.split(separator: ",") {
                let trimmed = String(name).trimmingSpaces
                if trimmed.hasPrefix(Self.bearerSubprotocolPrefix) { return String(trimmed.dropFirst(Self.bearerSubprotocolPrefix.count)) }
            }
        }
        return nil
    }

    /// A WebSocket subprotocol name that carries the token (the web console's way).
    public static let bearerSubprotocolPrefix = "staffcast.bearer."

    public static func == (a: HTTPRequestHead, b: HTTPRequestHead) -> Bool {
        a.method == b.method && a.path == b.path && a.query == b.query && a.isHTTP11 == b.isHTTP11
            && a.headers.map(\.name) == b.headers.map(\.name) && a.headers.map(\.value) == b.headers.map(\.value)
    }
}

extension String {
    var trimmingSpaces: String {
        var s = Substring(self)
        while s.first == " " || s.first == "\t" { s = s.dropFirst() }
        while s.last == " " || s.last == "\t" { s = s.dropLast() }
        return String(s)
    }
}
