// The only C that staffcast adds on top of libwebsockets: values that libwebsockets
// defines as preprocessor macros, which Swift cannot import.
#ifndef STAFFCAST_LWS_SHIM_H
#define STAFFCAST_LWS_SHIM_H
#include <libwebsockets.h>
#include <stdlib.h>
// libev: the event loop each service thread gives libwebsockets (LWS_SERVER_OPTION_LIBEV with a
// foreign loop), so the kernel's epoll reports ready sockets instead of poll() scanning them all.
// EV_COMPAT3 off: its `ev_loop` function would clash with `struct ev_loop` in Swift.
#define EV_COMPAT3 0
#include <ev.h>

/// Bytes libwebsockets needs in front of every payload passed to lws_write (LWS_PRE is a macro).
static inline size_t staffcast_lws_pre(void) { return LWS_PRE; }

/// "Do not listen" port marker for client-only contexts (CONTEXT_PORT_NO_LISTEN is a macro).
static inline int staffcast_lws_no_listen(void) { return CONTEXT_PORT_NO_LISTEN; }

/// Port marker for a server vhost that listens on nothing and serves adopted sockets.
static inline int staffcast_lws_no_listen_server(void) { return CONTEXT_PORT_NO_LISTEN_SERVER; }

/// lws_set_timeout's "close it now, asynchronously" (LWS_TO_KILL_ASYNC is a macro).
static inline int staffcast_lws_kill_async(void) { return LWS_TO_KILL_ASYNC; }

/// LWS_WRITE_RAW is a macro alias: bytes written as they are, no WebSocket framing.
static inline enum lws_write_protocol staffcast_lws_write_raw(void) { return LWS_WRITE_RAW; }

/// Adopts a descriptor as a raw file (its readability becomes LWS_CALLBACK_RAW_RX_FILE).
static inline struct lws *staffcast_lws_adopt_file(struct lws_vhost *vh, int fd, const char *protocol) {
    lws_sock_file_fd_type u;
    u.filefd = fd;
    return lws_adopt_descriptor_vhost(vh, LWS_ADOPT_RAW_FILE_DESC, u, protocol, NULL);
}
/// Adopts an accepted TCP socket as a raw socket; on a vhost with a certificate, libwebsockets
/// does the TLS handshake first and hands over decrypted bytes (LWS_CALLBACK_RAW_RX).
static inline struct lws *staffcast_lws_adopt_raw_socket(struct lws_vhost *vh, int fd, const char *protocol, int tls) {
    lws_sock_file_fd_type u;
    u.sockfd = fd;
    return lws_adopt_descriptor_vhost(vh, (lws_adoption_type)(LWS_ADOPT_SOCKET | (tls ? LWS_ADOPT_ALLOW_SSL : 0)), u, protocol, NULL);
}
/// SSL_OP_NO_* are macros built from function-like macros in OpenSSL 3: what a TLS vhost turns
/// off (everything before TLS 1.2).
static inline long staffcast_tls_old_versions_off(void) {
    return (long)(SSL_OP_NO_SSLv3 | SSL_OP_NO_TLSv1 | SSL_OP_NO_TLSv1_1);
}

/// A libev loop on epoll (NULL if the kernel refuses one). EVFLAG_NOSIGMASK: libev leaves the
/// thread's signal mask alone (staffcast handles SIGTERM itself).
static inline struct ev_loop *staffcast_ev_loop_new(void) {
    return ev_loop_new(EVBACKEND_EPOLL | EVFLAG_NOSIGMASK);
}
/// Runs the loop until staffcast_ev_break (or until nothing is watched: returns 0 then).
static inline int staffcast_ev_run(struct ev_loop *loop) { return ev_run(loop, 0); }
/// Makes the running staffcast_ev_run return after the current callback (loop thread only).
static inline void staffcast_ev_break(struct ev_loop *loop) { ev_break(loop, EVBREAK_ALL); }

/// A libev prepare watcher that calls `callback(context)` once per turn of the loop, after the
/// turn's callbacks and before the loop waits again. It does not keep the loop alive
/// (ev_unref), so ev_run still returns 0 once libwebsockets has stopped watching.
struct staffcast_turn_watcher {
    ev_prepare prepare; // first: the watcher libev hands back is this struct
    void (*callback)(void *);
    void *context;
};
static inline void staffcast_turn_fired(struct ev_loop *loop, ev_prepare *w, int revents) {
    (void)loop; (void)revents;
    struct staffcast_turn_watcher *t = (struct staffcast_turn_watcher *)w;
    t->callback(t->context);
}
/// Makes one, not started (NULL when out of memory); free it with staffcast_ev_turn_free.
static inline struct staffcast_turn_watcher *staffcast_ev_turn_new(void (*callback)(void *), void *context) {
    struct staffcast_turn_watcher *t = (struct staffcast_turn_watcher *)malloc(sizeof *t);
    if (!t) return NULL;
    ev_prepare_init(&t->prepare, staffcast_turn_fired);
    t->callback = callback;
    t->context = context;
    return t;
}
static inline void staffcast_ev_turn_start(struct ev_loop *loop, struct staffcast_turn_watcher *t) {
    ev_prepare_start(loop, &t->prepare);
    ev_unref(loop);
}
static inline void staffcast_ev_turn_stop(struct ev_loop *loop, struct staffcast_turn_watcher *t) {
    ev_ref(loop);
    ev_prepare_stop(loop, &t->prepare);
}
static inline void staffcast_ev_turn_free(struct staffcast_turn_watcher *t) { free(t); }
#endif
