#if canImport(Glibc)
import Glibc
#endif

/// How a non-blocking `connect()` that returned `EINPROGRESS` ended: waits up to `timeout`
/// seconds for the socket to become writable, then reads its `SO_ERROR`. Shared by
/// `ClientStream` and the integration tests' raw sockets; the caller owns `fd` and closes it
/// on anything but `.connected`.
public enum PendingConnect: Equatable, Sendable {
    case connected
    /// The connect failed: `strerror` of the socket's error.
    case failed(String)
    /// Not writable within the timeout.
    case timedOut

    public static func wait(_ fd: Int32, timeout: Double) -> PendingConnect {
        var pfd = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
        guard poll(&pfd, 1, Int32(timeout * 1000)) == 1 else { return .timedOut }
        var err: Int32 = 0
        var len = socklen_t(MemoryLayout<Int32>.size)
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len)
        return err == 0 ? .connected : .failed(String(cString: strerror(err)))
    }
}
