/* The Gloo backend behind a C wall: the only C++ in the tree. Every call
 * returns 0 or a negative COLL_E* code, with the detail in err; Gloo's
 * exceptions never cross this line. Private to libcollective. */
#ifndef COLL_GLOO_BACKEND_H
#define COLL_GLOO_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "client.h"
#include "collective.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gloo_ctx gloo_ctx;

/* Connects `size` ranks through hvdd's store (scope, with this prefix for
 * every key: each context needs its own) on interface iface. */
int gb_connect(gloo_ctx **out, hvdd_client *client, const char *scope,
               const char *prefix, int rank, int size, const char *iface,
               int timeout_ms, char *err, size_t errlen);
void gb_free(gloo_ctx *g);

/* Each rank sends bytes to each rank; in and out hold size * bytes. */
int gb_alltoall(gloo_ctx *g, const void *in, void *out, size_t bytes, char *err,
                size_t errlen);
/* send[r] bytes go to rank r, recv[r] bytes come from rank r. */
int gb_alltoallv(gloo_ctx *g, const void *in, const size_t *send, void *out,
                 const size_t *recv, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif
