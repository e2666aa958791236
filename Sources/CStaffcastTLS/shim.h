// OpenSSL for the clients (`staffcast watch`, `send`, `status` and the tests): only what
// `ClientStream` needs, with the macros Swift cannot import wrapped as functions.
// (The server's TLS is libwebsockets' own, on the same OpenSSL.)
#ifndef STAFFCAST_TLS_SHIM_H
#define STAFFCAST_TLS_SHIM_H
#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/x509v3.h>

/// A client context: TLS 1.2 or later, peer verification on, trusting `ca_file` when given,
/// the system's store otherwise. NULL on failure (the reason is on OpenSSL's error queue).
static inline SSL_CTX *sct_client_context(const char *ca_file) {
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    if (!ctx) return NULL;
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
    // A peer that closes without close_notify is an end of stream, not an error.
    SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF);
    SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    int ok = ca_file ? SSL_CTX_load_verify_locations(ctx, ca_file, NULL) : SSL_CTX_set_default_verify_paths(ctx);
    if (ok != 1) { SSL_CTX_free(ctx); return NULL; }
    return ctx;
}

/// Names the server to verify: an IP address is checked against the certificate's IP
/// entries, a name against its DNS names (and sent as SNI). 1 on success.
static inline int sct_set_peer_name(SSL *ssl, const char *host, int is_ip) {
    if (is_ip) return X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host);
    if (SSL_set_tlsext_host_name(ssl, host) != 1) return 0;
    return SSL_set1_host(ssl, host);
}

/// Why the certificate was refused (after a failed handshake), or NULL when it was not.
static inline const char *sct_verify_error(const SSL *ssl) {
    long r = SSL_get_verify_result(ssl);
    return r == X509_V_OK ? NULL : X509_verify_cert_error_string(r);
}

/// The oldest error on this thread's OpenSSL queue as text (the queue is then cleared).
static inline void sct_last_error(char *buf, size_t len) {
    unsigned long e = ERR_get_error();
    if (e == 0) { if (len) buf[0] = 0; } else { ERR_error_string_n(e, buf, len); }
    ERR_clear_error();
}
#endif
