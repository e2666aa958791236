/// How a service loop waits for its sockets (config key `event_loop`).
///
/// - `ev`: libev on epoll, handed to libwebsockets as each loop's foreign loop; the kernel
///   reports which descriptors are ready, so a wake-up costs the same with 10 or 10,000
///   WebSockets open.
/// - `poll`: libwebsockets' built-in `poll()`, which passes and scans every descriptor it holds
///   on every wake-up (kept as a fallback). Plain connections stay in the loop's own epoll set
///   either way; libwebsockets holds only TLS ones.
///
/// libuv is not offered: Debian's libwebsockets 4.1.6 libuv plugin closes its wake-up eventfd
/// twice when a context is destroyed (once at once, once from libuv's close callback), which
/// can close another thread's newly opened descriptor (docs/architecture.md).
public enum EventLoopKind: String, Sendable, Equatable, CaseIterable {
    case ev
    case poll
}
