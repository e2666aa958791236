import ArgumentParser
import Foundation
import StaffcastClient
import StaffcastCore
import StaffcastPostgres
import StaffcastServer

/// A command's failure: one line on stderr for the person, then a non-zero exit (`status`).
struct CommandFailure: Error, CustomStringConvertible {
    let message: String
    let status: ExitStatus
    init(_ message: String, status: ExitStatus = .failed) {
        self.message = message
        self.status = status
    }
    var description: String { message }
}

/// Runs `body`; any error becomes one line "staffcast: <sentence> [code]" on stderr (the code
/// when the server or the store gave one) and the exit status of `ExitStatus.of`.
func reportingFailures<T>(_ body: () throws -> T) throws -> T {
    do {
        return try body()
    } catch let e as ExitCode {
        throw e
    } catch let e as CleanExit {
        throw e
    } catch {
        printError("staffcast: \(errorLine(error))")
        throw ExitStatus.of(error).exitCode
    }
}

/// The one-line form of an error: its sentence, then its code in brackets when it has one.
func errorLine(_ error: Error) -> String {
    switch error {
    case let e as StaffcastError: return oneLine("\(e.message) [\(e.code.rawValue)]")
    case let e as ConfigError: return oneLine("\(e) [\(ErrorCode.invalid.rawValue)]")
    case let e as ServerError:
        if case .tls = e { return oneLine("\(e) [\(ErrorCode.invalid.rawValue)]") }
        return oneLine(e)
    case let e as PostgresError:
        // The store's codes (cluster, migration, …) say nothing to a person; the SQLSTATE might.
        return oneLine(e.sqlState.map { "\(e.message) [\($0)]" } ?? e.message)
    default: return oneLine(error)
    }
}

func oneLine(_ error: Error) -> String {
    oneLine(String(describing: error))
}

func oneLine(_ text: String) -> String {
    text.replacingOccurrences(of: "\n", with: " ")
}

func printError(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}
