/// Why a client call failed, in words for the person at the terminal.
public enum ClientError: Error, CustomStringConvertible, Equatable {
    case badURL(String)
    case connect(String)
    case handshake(status: Int, body: String)
    case protocolViolation(String)
    case closed(code: UInt16, reason: String)
    case timeout
    case server(code: String, message: String, status: Int)
    case missingToken
    case tls(String)

    public var description: String {
        switch self {
        case .badURL(let u): return "not a usable server URL: \(u) (expected e.g. http://127.0.0.1:8080)"
        case .connect(let s): return "cannot reach the server: \(s)"
        case .handshake(let status, let body): return "the server refused the connection (HTTP \(status)): \(body)"
        case .protocolViolation(let s): return "the server sent something unexpected: \(s)"
        case .closed(let code, let reason): return "the server closed the connection (\(code)\(reason.isEmpty ? "" : ": \(reason)"))"
        case .timeout: return "the server did not answer in time"
        case .server(let code, let message, _): return "\(message) [\(code)]"
        case .tls(let s): return "TLS: \(s)"
        case .missingToken: return "no token: pass --token TOKEN, set STAFFCAST_TOKEN, or save it in ~/.config/staffcast/token (mode 0600)"
        }
    }
}
