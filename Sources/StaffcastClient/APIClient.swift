import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import StaffcastCore

/// The HTTP API of a staffcast server (docs/protocol.md, HTTP API), called synchronously with URLSession.
public struct APIClient: Sendable {
    public let server: URL
    public let token: String?
    public let timeout: TimeInterval

    public init(server: String, token: String?, timeout: TimeInterval = 15) throws(ClientError) {
        var text = server
        if text.hasPrefix("ws://") { text = "http://" + text.dropFirst(5) }
        guard let url = URL(string: text), url.scheme == "http" || url.scheme == "https", url.host != nil else {
            throw ClientError.badURL(server)
        }
        self.server = url
        self.token = token
        self.timeout = timeout
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

    /// One request; throws only when the server could not be reached.
    public func raw(_ method: String, _ path: String, query: [String: String] = [:], body: Data? = nil,
                    contentType: String? = nil) throws(ClientError) -> Response {
        var c = URLComponents(url: server, resolvingAgainstBaseURL: false)!
        c.path = path
        if !query.isEmpty { c.queryItems = query.sorted { $0.key < $1.key }.map { URLQueryItem(name: $0.key, value: $0.value) } }
        guard let url = c.url else { throw ClientError.badURL(path) }
        var request = URLRequest(url: url, timeoutInterval: timeout)
        request.httpMethod = method
        request.httpBody = body
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        if let contentType { request.setValue(contentType, forHTTPHeaderField: "Content-Type") }
        let box = ResultBox()
        let done = DispatchSemaphore(value: 0)
        let task = URLSession.shared.dataTask(with: request) { data, response, error in
            if let error {
                box.set(.failure(ClientError.connect(error.localizedDescription)))
            } else {
                box.set(.success(Response(status: (response as? HTTPURLResponse)?.statusCode ?? 0, body: data ?? Data())))
            }
            done.signal()
        }
        task.resume()
        if done.wait(timeout: .now() + timeout + 1) == .timedOut {
            task.cancel()
            throw ClientError.timeout
        }
        switch box.get() {
        case .success(let r)?: return r
        case .failure(let e)?: throw e
        case nil: throw ClientError.timeout
        }
    }

    /// A request whose non-2xx answer becomes `ClientError.server` with the server's sentence.
    public func call(_ method: String, _ path: String, query: [String: String] = [:], body: Data? = nil,
                     contentType: String? = nil) throws(ClientError) -> Data {
        let r = try raw(method, path, query: query, body: body, contentType: contentType)
        guard (200..<300).contains(r.status) else {
            if let object = try? JSONSerialization.jsonObject(with: r.body) as? [String: Any],
               let error = object["error"] as? [String: Any] {
                throw ClientError.server(code: error["code"] as? String ?? "error",
                                         message: error["message"] as? String ?? "HTTP \(r.status)", status: r.status)
            }
            throw ClientError.server(code: "http_\(r.status)", message: "the server answered HTTP \(r.status)", status: r.status)
        }
        return r.body
    }

    public func sendMessage(event: UUID, message: String, type: String?, priority: String?,
                            expiresInMinutes: Int?, escalateAfterMinutes: Int? = nil) throws(ClientError) -> StaffMessage {
        var body: [String: Any] = ["message": message]
        if let type { body["message_type"] = type }
        if let priority { body["priority"] = priority }
        if let expiresInMinutes { body["expires_in_minutes"] = expiresInMinutes }
        if let escalateAfterMinutes { body["escalate_after_minutes"] = escalateAfterMinutes }
        let data = try call("POST", "/v1/events/\(event.uuidString.lowercased())/messages",
                            body: try? JSONSerialization.data(withJSONObject: body), contentType: "application/json")
        do {
            return try JSONDecoder().decode(StaffMessage.self, from: data)
        } catch {
            throw ClientError.protocolViolation("the reply was not a Message")
        }
    }
}

/// Hands a URLSession result from its callback thread to the waiting caller.
private final class ResultBox: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Result<APIClient.Response, ClientError>?
    func set(_ v: Result<APIClient.Response, ClientError>) { lock.lock(); value = v; lock.unlock() }
    func get() -> Result<APIClient.Response, ClientError>? { lock.lock(); defer { lock.unlock() }; return value }
}
