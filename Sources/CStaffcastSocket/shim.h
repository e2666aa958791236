// The server's few socket helpers that Swift cannot express well: epoll (Glibc's overlay does
// not bring <sys/epoll.h>, and struct epoll_event is packed), a listening socket shared by
// every service loop through SO_REUSEPORT, and accept4; and malloc_trim, which the ticker calls
// after a wave of connections closed. Everything speaks plain ints.
// Functions return -errno on failure, so Swift turns every failure into an error in one place
// (`SocketError`).
#ifndef STAFFCAST_SOCKET_SHIM_H
#define STAFFCAST_SOCKET_SHIM_H
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <linux/sockios.h>
#include <malloc.h>

#define SC_POLL_IN 0x001
#define SC_POLL_OUT 0x004
#define SC_POLL_ERR 0x008
#define SC_POLL_HUP 0x010

static inline int sc_epoll_create(void) {
    int fd = epoll_create1(EPOLL_CLOEXEC);
    return fd < 0 ? -errno : fd;
}

/// op: 1 add, 2 delete, 3 modify; events: SC_POLL_IN | SC_POLL_OUT.
static inline int sc_epoll_ctl(int epfd, int op, int fd, unsigned events) {
    struct epoll_event ev = { .events = events, .data = { .fd = fd } };
    int o = op == 1 ? EPOLL_CTL_ADD : op == 2 ? EPOLL_CTL_DEL : EPOLL_CTL_MOD;
    return epoll_ctl(epfd, o, fd, &ev) < 0 ? -errno : 0;
}

/// Ready descriptors (up to `max`, at most 512) with their events; returns how many, or -errno.
static inline int sc_epoll_wait(int epfd, int *fds, unsigned *evs, int max, int timeout_ms) {
    struct epoll_event events[512];
    if (max > 512) max = 512;
    int n = epoll_wait(epfd, events, max, timeout_ms);
    if (n < 0) return -errno;
    for (int i = 0; i < n; i++) { fds[i] = events[i].data.fd; evs[i] = events[i].events; }
    return n;
}

/// A non-blocking TCP socket bound to ip:port (IPv4 text, or "::" / IPv6 text), with
/// SO_REUSEPORT when asked. Returns the descriptor or -errno.
static inline int sc_bind_tcp(const char *ip, int port, int reuseport) {
    int v6 = strchr(ip, ':') != NULL;
    int fd = socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return -errno;
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (reuseport) setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
    // One address of either family; only where the address goes and its size differ.
    struct sockaddr_storage a;
    memset(&a, 0, sizeof a);
    struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&a;
    struct sockaddr_in *a4 = (struct sockaddr_in *)&a;
    void *addr = v6 ? (void *)&a6->sin6_addr : (void *)&a4->sin_addr;
    socklen_t len = v6 ? sizeof *a6 : sizeof *a4;
    if (v6) {
        a6->sin6_family = AF_INET6;
        a6->sin6_port = htons((unsigned short)port);
    } else {
        a4->sin_family = AF_INET;
        a4->sin_port = htons((unsigned short)port);
    }
    if (inet_pton(v6 ? AF_INET6 : AF_INET, ip, addr) != 1) { close(fd); return -EINVAL; }
    if (bind(fd, (struct sockaddr *)&a, len) < 0) { int e = errno; close(fd); return -e; }
    return fd;
}

/// A non-blocking TCP socket listening on ip:port with SO_REUSEPORT, so every service loop can
/// listen on the same port and the kernel spreads new connections over them (`sc_probe_port`
/// first makes sure nobody else is there). Returns the descriptor or -errno.
static inline int sc_listen(const char *ip, int port, int backlog) {
    int fd = sc_bind_tcp(ip, port, 1);
    if (fd < 0) return fd;
    if (listen(fd, backlog) < 0) { int e = errno; close(fd); return -e; }
    return fd;
}

/// 0 when nobody listens on ip:port, else -errno (-EADDRINUSE when someone does). The probe
/// binds WITHOUT SO_REUSEPORT, so it fails even against a socket that has it (another
/// staffcast): SO_REUSEPORT alone would let a second server join the port and split its
/// traffic. SO_REUSEADDR keeps connections in TIME_WAIT from a previous run from counting.
static inline int sc_probe_port(const char *ip, int port) {
    int fd = sc_bind_tcp(ip, port, 0);
    if (fd < 0) return fd;
    close(fd);
    return 0;
}

/// The port a socket is bound to, or -errno.
static inline int sc_local_port(int fd) {
    struct sockaddr_storage a;
    socklen_t l = sizeof a;
    if (getsockname(fd, (struct sockaddr *)&a, &l) < 0) return -errno;
    if (a.ss_family == AF_INET6) return ntohs(((struct sockaddr_in6 *)&a)->sin6_port);
    return ntohs(((struct sockaddr_in *)&a)->sin_port);
}

/// An IPv4 address (network order) as dotted text into `out` (at least 16 bytes). Written out
/// by hand because it runs once per accepted connection: glibc's inet_ntop formats IPv4 with
/// sprintf, ~1.5 % of the server's CPU in a reconnect storm (perf, docs/performance.md).
static inline void sc_format_ipv4(uint32_t network_order, char *out) {
    const unsigned char *b = (const unsigned char *)&network_order;
    char *p = out;
    for (int i = 0; i < 4; i++) {
        unsigned v = b[i];
        if (v >= 100) { *p++ = (char)('0' + v / 100); v %= 100; *p++ = (char)('0' + v / 10); v %= 10; }
        else if (v >= 10) { *p++ = (char)('0' + v / 10); v %= 10; }
        *p++ = (char)('0' + v);
        if (i < 3) *p++ = '.';
    }
    *p = 0;
}

/// Accepts one connection, non-blocking, with TCP_NODELAY; writes the peer's address as text
/// into `peer`. Returns the descriptor or -errno (-EAGAIN when none is waiting).
static inline int sc_accept(int lfd, char *peer, int peer_len) {
    struct sockaddr_storage a;
    socklen_t l = sizeof a;
    int fd = accept4(lfd, (struct sockaddr *)&a, &l, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return -errno;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (peer && peer_len > 0) {
        peer[0] = 0;
        if (a.ss_family == AF_INET6) inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&a)->sin6_addr, peer, peer_len);
        else if (peer_len >= 16) sc_format_ipv4(((struct sockaddr_in *)&a)->sin_addr.s_addr, peer);
    }
    return fd;
}

/// Reads what is there, or -errno (-EAGAIN: nothing now); 0 is end of stream.
static inline long sc_read(int fd, void *buf, long len) {
    long n = recv(fd, buf, (size_t)len, 0);
    return n < 0 ? -errno : n;
}

/// Writes what the socket takes now, or -errno (-EAGAIN: nothing now). Never raises SIGPIPE.
static inline long sc_write(int fd, const void *buf, long len) {
    long n = send(fd, buf, (size_t)len, MSG_NOSIGNAL);
    return n < 0 ? -errno : n;
}

static inline int sc_close(int fd) { return close(fd) < 0 ? -errno : 0; }

/// Closes with a reset (SO_LINGER 0): for peers that do not read, so nothing lingers.
static inline void sc_close_reset(int fd) {
    struct linger l = { 1, 0 };
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
    close(fd);
}
/// Makes a later close() reset the connection and discard unsent data (SO_LINGER 0), so a
/// peer that stopped reading releases the kernel's send queue at once.
static inline void sc_set_linger_zero(int fd) {
    struct linger l = { 1, 0 };
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
}
/// Bytes in the socket's send queue that the peer has not acknowledged (SIOCOUTQ), or -errno.
/// A queue that never shrinks means a peer that stopped reading.
static inline int sc_send_queue(int fd) {
    int n = 0;
    if (ioctl(fd, SIOCOUTQ, &n) < 0) return -errno;
    return n;
}
/// Gives memory that was freed back to the system (glibc keeps it in its arenas otherwise:
/// hundreds of closed TLS handshakes left tens of MB resident for good). 1 if any was released.
static inline int sc_malloc_trim(void) { return malloc_trim(0); }
#endif
