// libpq imports into Swift as it is; this header only gives the module one place to include it.
#ifndef STAFFCAST_PQ_SHIM_H
#define STAFFCAST_PQ_SHIM_H
#include <libpq-fe.h>
#endif
