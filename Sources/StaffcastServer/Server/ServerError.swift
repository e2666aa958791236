/// Why a server could not start.
public enum ServerError: Error, CustomStringConvertible {
    case listen(String)
    /// Someone (another staffcast too) already listens on the port.
    case portInUse(String)
    case database(String)
    case tls(String)
    case push(String)

    public var description: String {
        switch self {
        case .listen(let s): return s
        case .portInUse(let s): return s
        case .database(let s): return s
        case .tls(let s): return s
        case .push(let s): return s
        }
    }
}
