// The benchmark client's few C helpers: epoll (Glibc's Swift overlay does not bring
// <sys/epoll.h>, and struct epoll_event is packed), non-blocking loopback connects, a
// reset-on-close (no TIME_WAIT: the bench opens tens of thousands of connections a run),
// clocks, and memmem. Everything speaks plain ints so Swift needs no C structs.
#ifndef STAFFCAST_BENCH_EPOLL_H
#define STAFFCAST_BENCH_EPOLL_H
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

// GNU memmem, declared here in case <string.h> was read without _GNU_SOURCE.
extern void *memmem(const void *, size_t, const void *, size_t);

#define SC_EV_IN 0x001
#define SC_EV_OUT 0x004
#define SC_EV_ERR 0x008
#define SC_EV_HUP 0x010

static inline int sc_epoll_create(void) { return epoll_create1(EPOLL_CLOEXEC); }

static inline int sc_epoll_add(int epfd, int fd) {
    struct epoll_event ev = { .events = EPOLLIN, .data = { .fd = fd } };
    return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev);
}

/// op: 1 add, 2 delete, 3 modify; events: SC_EV_IN | SC_EV_OUT.
static inline int sc_epoll_ctl(int epfd, int op, int fd, unsigned events) {
    struct epoll_event ev = { .events = events, .data = { .fd = fd } };
    int o = op == 1 ? EPOLL_CTL_ADD : op == 2 ? EPOLL_CTL_DEL : EPOLL_CTL_MOD;
    return epoll_ctl(epfd, o, fd, &ev);
}

/// Waits for readable descriptors; writes up to `max` of them to `fds`; returns how many.
static inline int sc_epoll_wait(int epfd, int *fds, int max, int timeout_ms) {
    struct epoll_event events[256];
    if (max > 256) max = 256;
    int n = epoll_wait(epfd, events, max, timeout_ms);
    for (int i = 0; i < n; i++) fds[i] = events[i].data.fd;
    return n;
}

/// Like sc_epoll_wait, with each descriptor's events (SC_EV_…) in `evs`.
static inline int sc_epoll_wait2(int epfd, int *fds, unsigned *evs, int max, int timeout_ms) {
    struct epoll_event events[1024];
    if (max > 1024) max = 1024;
    int n = epoll_wait(epfd, events, max, timeout_ms);
    for (int i = 0; i < n; i++) { fds[i] = events[i].data.fd; evs[i] = events[i].events; }
    return n;
}

/// A non-blocking TCP socket connecting to ip:port (ip as text, IPv4). Returns the descriptor
/// (connected, or with the connect in progress: wait for SC_EV_OUT), or -errno.
static inline int sc_connect_nb(const char *ip, int port) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return -errno;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons((unsigned short)port);
    if (inet_pton(AF_INET, ip, &a.sin_addr) != 1) { close(fd); return -EINVAL; }
    if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0 && errno != EINPROGRESS) {
        int e = errno;
        close(fd);
        return -e;
    }
    return fd;
}

/// The pending error of a socket (0 once a non-blocking connect has succeeded).
static inline int sc_so_error(int fd) {
    int e = 0;
    socklen_t l = sizeof e;
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &l) < 0) return errno;
    return e;
}

/// Closes with a reset (SO_LINGER 0): no TIME_WAIT left behind on either side.
static inline void sc_close_rst(int fd) {
    struct linger l = { 1, 0 };
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
    close(fd);
}

/// Makes a descriptor blocking (0) or non-blocking (1).
static inline int sc_set_nonblocking(int fd, int on) {
    int f = fcntl(fd, F_GETFL, 0);
    if (f < 0) return -1;
    return fcntl(fd, F_SETFL, on ? (f | O_NONBLOCK) : (f & ~O_NONBLOCK));
}

static inline long long sc_mono_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static inline long long sc_real_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

/// Offset of `needle` in `hay`, or -1.
static inline long sc_find(const void *hay, long n, const char *needle, long m) {
    if (n <= 0 || m <= 0 || m > n) return -1;
    const void *p = memmem(hay, (size_t)n, needle, (size_t)m);
    return p ? (long)((const char *)p - (const char *)hay) : -1;
}

/// A non-blocking eventfd, to wake a thread blocked in epoll_wait.
static inline int sc_eventfd(void) { return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC); }
static inline void sc_eventfd_signal(int fd) { eventfd_write(fd, 1); }
static inline void sc_eventfd_drain(int fd) { eventfd_t v; eventfd_read(fd, &v); }

static inline int sc_errno(void) { return errno; }
#endif
