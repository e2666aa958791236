// epoll for the benchmark's readers (Glibc's Swift overlay does not bring <sys/epoll.h>, and
// struct epoll_event is packed): three small wrappers that speak plain ints.
#ifndef STAFFCAST_BENCH_EPOLL_H
#define STAFFCAST_BENCH_EPOLL_H
#include <sys/epoll.h>

static inline int sc_epoll_create(void) { return epoll_create1(0); }

static inline int sc_epoll_add(int epfd, int fd) {
    struct epoll_event ev = { .events = EPOLLIN, .data = { .fd = fd } };
    return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev);
}

/// Waits for readable descriptors; writes up to `max` of them to `fds`; returns how many.
static inline int sc_epoll_wait(int epfd, int *fds, int max, int timeout_ms) {
    struct epoll_event events[256];
    if (max > 256) max = 256;
    int n = epoll_wait(epfd, events, max, timeout_ms);
    for (int i = 0; i < n; i++) fds[i] = events[i].data.fd;
    return n;
}
#endif
