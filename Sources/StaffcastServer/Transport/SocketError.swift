import Glibc

/// A failed socket, epoll or libwebsockets call, turned into a thrown error in one place:
/// what was attempted, and the errno text (the C helpers return -errno).
struct SocketError: Error, CustomStringConvertible {
    var operation: String
    var code: Int32

    var description: String {
        code == 0 ? operation : "\(operation): \(String(cString: strerror(code)))"
    }

    /// Returns `result` when it is not negative; throws with `-result` as errno otherwise.
    @discardableResult
    static func check<T: SignedInteger>(_ result: T, _ operation: @autoclosure () -> String) throws(SocketError) -> T {
        guard result >= 0 else { throw SocketError(operation: operation(), code: Int32(truncatingIfNeeded: 0 - result)) }
        return result
    }
}
