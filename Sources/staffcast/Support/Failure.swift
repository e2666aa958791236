import ArgumentParser
import Foundation

/// A command's failure: one line on stderr for the person, then a non-zero exit.
struct CommandFailure: Error, CustomStringConvertible {
    let message: String
    init(_ message: String) { self.message = message }
    var description: String { message }
}

/// Runs `body`; any error becomes "staffcast: <reason>" on stderr and exit status 1.
func reportingFailures<T>(_ body: () throws -> T) throws -> T {
    do {
        return try body()
    } catch let e as ExitCode {
        throw e
    } catch let e as CleanExit {
        throw e
    } catch {
        printError("staffcast: \(oneLine(error))")
        throw ExitCode.failure
    }
}

func oneLine(_ error: Error) -> String {
    String(describing: error).replacingOccurrences(of: "\n", with: " ")
}

func printError(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}
