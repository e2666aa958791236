// The only C that staffcast adds on top of libwebsockets: values that libwebsockets
// defines as preprocessor macros, which Swift cannot import.
#ifndef STAFFCAST_LWS_SHIM_H
#define STAFFCAST_LWS_SHIM_H
#include <libwebsockets.h>

/// Bytes libwebsockets needs in front of every payload passed to lws_write (LWS_PRE is a macro).
static inline size_t staffcast_lws_pre(void) { return LWS_PRE; }

/// "Do not listen" port marker for client-only contexts (CONTEXT_PORT_NO_LISTEN is a macro).
static inline int staffcast_lws_no_listen(void) { return CONTEXT_PORT_NO_LISTEN; }

#endif
