import Foundation

/// Which change logs one read of the change feed looks at.
///
/// Every log's statement trigger says which log it is in its NOTIFY payload
/// (`staffcast_notify('message')`, sql/001 and later), so a read woken by notifications reads
/// only the logs they name: a plain send costs a snapshot of three statements instead of nine
/// (issue 21: "the wake-up can carry what the listener needs so that it reads less"). Access and
/// token changes are read every time — the other logs are read only when the snapshot holds
/// their whole backlog (`Store.changes`), and a revoke must never wait behind a message. A
/// payload this version does not know, a read on the poll timer, a first read and the read after
/// a full page (`hasMore`) read everything.
public struct ChangeLogs: OptionSet, Sendable, Hashable {
    public let rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    public static let access = ChangeLogs(rawValue: 1 << 0)
    public static let token = ChangeLogs(rawValue: 1 << 1)
    public static let message = ChangeLogs(rawValue: 1 << 2)
    public static let notification = ChangeLogs(rawValue: 1 << 3)
    public static let messageChange = ChangeLogs(rawValue: 1 << 4)
    public static let reply = ChangeLogs(rawValue: 1 << 5)
    public static let read = ChangeLogs(rawValue: 1 << 6)
    public static let round = ChangeLogs(rawValue: 1 << 7)
    public static let answer = ChangeLogs(rawValue: 1 << 8)

    public static let all: ChangeLogs = [.access, .token, .message, .notification, .messageChange, .reply, .read, .round, .answer]
    /// Read on every read: they gate the others.
    public static let gates: ChangeLogs = [.access, .token]

    /// The log a trigger's payload names; nil for one this version does not know. A send batch
    /// committed for its own server's fan-out names its origin after the log
    /// (`message@<origin>:<batch>`, sql/014).
    public static func named(_ payload: String) -> ChangeLogs? {
        switch payload.split(separator: "@", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? payload {
        case "access": return .access
        case "token": return .token
        case "message": return .message
        case "notification": return .notification
        case "message_change": return .messageChange
        case "reply": return .reply
        case "read": return .read
        case "round": return .round
        case "answer": return .answer
        default: return nil
        }
    }

    /// The batch numbers when every payload is a send batch of the server whose origin this is
    /// (`message@<origin>:<number>`, `OwnSendBatches`): batches that server's own fan-out may
    /// already have handed on (`ChangeListener.Shortcut`). Nil when any payload is something
    /// else, or when there is none.
    public static func ownSendBatches(_ payloads: [String], origin: String) -> [UInt64]? {
        let prefix = "message@" + origin + ":"
        var batches: [UInt64] = []
        for payload in payloads {
            guard payload.hasPrefix(prefix), let n = UInt64(payload.dropFirst(prefix.count)) else { return nil }
            batches.append(n)
        }
        return batches.isEmpty ? nil : batches
    }

    /// What a read woken by these payloads must look at: the logs they name and the gates;
    /// everything when one is unknown.
    public static func toRead(after payloads: [String]) -> ChangeLogs {
        var logs = ChangeLogs.gates
        for payload in payloads {
            guard let log = named(payload) else { return .all }
            logs.formUnion(log)
        }
        return logs
    }
}
