import ArgumentParser
import StaffcastClient
import StaffcastCore
import StaffcastPostgres
import StaffcastServer

/// The exit statuses every command uses, so a script can tell "fix the request" from "not
/// allowed" from "try again later". Documented in `staffcast --help` (`helpText`).
enum ExitStatus: Int32 {
    /// Refused or failed: an invalid value, a conflict (duplicate send), an invite used up…
    case failed = 1
    /// Not found or not allowed: an unknown id, no access to the event, a missing, wrong,
    /// expired or revoked token, a data dir without staffcast data.
    case notAllowed = 2
    /// Unavailable, try again later: the server unreachable, not ready or rate-limiting, the
    /// database down, the port already in use.
    case unavailable = 3
    /// The command line or the configuration is wrong: an unknown option or config key, a value
    /// out of its range (sysexits' EX_USAGE, as the argument parser uses).
    case usage = 64

    static let helpText = """
        Exit status: 0 done; 1 refused or failed (a value staffcast or the server
        refuses, such as a priority or an id that is not a UUID, a duplicate, …); 2 not
        found or not allowed (an unknown id, an event you cannot see, no access, a
        missing, wrong, expired or revoked token); 3 unavailable, try again later
        (server unreachable or not ready, database down, port in use, rate limited); 64
        the command line or configuration is wrong (an unknown option or config key, a
        missing argument, a config value out of range). Errors are one line on stderr:
        "staffcast: <what went wrong> [code]" (the code when the server gave one).
        """

    var exitCode: ExitCode { ExitCode(rawValue) }

    /// The status for a failure.
    static func of(_ error: Error) -> ExitStatus {
        switch error {
        case let e as CommandFailure: return e.status
        case is ConfigError: return .usage
        case let e as StaffcastError: return of(code: e.code.rawValue)
        case let e as ClientError:
            switch e {
            case .server(let code, _, _): return of(code: code)
            case .missingToken: return .notAllowed
            case .connect, .timeout: return .unavailable
            case .handshake(let status, _):
                switch status {
                case 401, 403, 404: return .notAllowed
                case 429, 502, 503, 504: return .unavailable
                default: return .failed
                }
            case .closed(let code, _): return code == 4401 || code == 4403 || code == 4404 ? .notAllowed : .unavailable
            default: return .failed
            }
        case let e as ServerError:
            switch e {
            case .portInUse, .database: return .unavailable
            case .tls: return .usage // the configured certificate or key is wrong: fix the configuration
            default: return .failed
            }
        case let e as PostgresError:
            if e.code == .noData { return .notAllowed }
            return e.isConnectionProblem ? .unavailable : .failed
        default: return .failed
        }
    }

    /// The status for a protocol error code (docs/protocol.md).
    static func of(code: String) -> ExitStatus {
        switch code {
        case "unauthorized", "forbidden", "not_found": return .notAllowed
        case "unavailable", "rate_limited": return .unavailable
        default: return .failed
        }
    }
}
