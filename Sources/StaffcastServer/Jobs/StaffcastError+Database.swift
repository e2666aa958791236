import Logging
import StaffcastCore
import StaffcastPostgres

extension StaffcastError {
    /// What a client is told about any failure. Database details go to the log, not the client.
    static func from(_ error: Error, logger: Logger) -> StaffcastError {
        if let e = error as? StaffcastError { return e }
        if let e = error as? PostgresError {
            if e.code == .outcomeUnknown {
                // Never "nothing was stored": a stalled database runs what it was sent when it
                // resumes, and an organiser told so sends the emergency again.
                logger.warning("database stopped answering after a request was sent", metadata: ["error": "\(e)"])
                return .unavailable("The database stopped answering after this request reached it, so it may still be carried out when the database recovers. Check before you try again.")
            }
            if e.isConnectionProblem {
                logger.warning("database unavailable", metadata: ["error": "\(e)"])
                return .unavailable("The database is not reachable right now; nothing was stored. Try again in a moment.")
            }
            switch e.sqlState {
            case "42501":
                return .forbidden("The database refused this for your access level.")
            case "23503":
                return .notFound("Something this request refers to does not exist.")
            case let s? where s.hasPrefix("22") || s == "23514":
                return .invalid("The database refused a value of this request: \(e.message).")
            case "57014":
                return .unavailable("The database took too long; nothing was stored. Try again.")
            default:
                break
            }
            logger.error("database error", metadata: ["error": "\(e)"])
            return StaffcastError(.internal, "The server hit an unexpected database error; nothing was stored.")
        }
        logger.error("unexpected error", metadata: ["error": "\(error)"])
        return StaffcastError(.internal, "The server hit an unexpected error.")
    }
}
