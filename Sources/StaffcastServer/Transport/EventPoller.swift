import CStaffcastSocket

/// One epoll set: the service loop's own descriptors (its listening socket, its plain HTTP
/// connections and its plain WebSockets). Owned by one service loop; its descriptor is
/// adopted by libwebsockets as a raw file, so the loop's one wait wakes for these too.
final class EventPoller {
    struct Ready {
        var fd: Int32
        var readable: Bool
        var writable: Bool
        var failed: Bool
    }

    let fd: Int32
    /// At most this many descriptors per `poll` (level-triggered: the rest stay ready for the
    /// loop's next turn, after libwebsockets has serviced its own sockets).
    /// (256: a reconnect or read storm over thousands of WebSockets takes fewer turns.)
    private var fds = [Int32](repeating: 0, count: 256)
    private var events = [UInt32](repeating: 0, count: 256)

    init() throws(SocketError) {
        fd = Int32(try SocketError.check(sc_epoll_create(), "epoll_create1"))
    }

    /// False once libwebsockets watches `fd` as a raw file: it closes it when its context is
    /// destroyed, so closing it here too would close whatever descriptor took the number since.
    private var ownsDescriptor = true

    deinit { if ownsDescriptor { _ = sc_close(fd) } }

    /// The descriptor now belongs to libwebsockets (adopted as a raw file); keep using it until
    /// the context is destroyed, then drop this poller.
    func handOverDescriptor() { ownsDescriptor = false }

    func add(_ socket: Int32, writable: Bool = false) throws(SocketError) {
        try SocketError.check(sc_epoll_ctl(fd, 1, socket, Self.mask(writable)), "epoll add")
    }

    /// `readable` false: the socket is not watched for input (a connection whose reading is
    /// paused: level-triggered, its unread bytes would wake the loop on every turn).
    func modify(_ socket: Int32, readable: Bool = true, writable: Bool) {
        _ = sc_epoll_ctl(fd, 3, socket, Self.mask(writable, readable: readable))
    }

    func remove(_ socket: Int32) {
        _ = sc_epoll_ctl(fd, 2, socket, 0)
    }

    /// What is ready now, without waiting.
    func poll() -> [Ready] {
        let n = sc_epoll_wait(fd, &fds, &events, Int32(fds.count), 0)
        guard n > 0 else { return [] }
        return (0..<Int(n)).map { i in
            let e = events[i]
            return Ready(fd: fds[i], readable: e & UInt32(SC_POLL_IN) != 0, writable: e & UInt32(SC_POLL_OUT) != 0,
                         failed: e & UInt32(SC_POLL_ERR | SC_POLL_HUP) != 0)
        }
    }

    private static func mask(_ writable: Bool, readable: Bool = true) -> UInt32 {
        (readable ? UInt32(SC_POLL_IN) : 0) | (writable ? UInt32(SC_POLL_OUT) : 0)
    }
}
