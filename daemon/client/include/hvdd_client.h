/* The client of hvdd (libcurl), used by the launcher, the agent and
 * libcollective. One client holds one connection and is used by one
 * thread at a time. Calls retry connection failures with backoff until the
 * client's deadline, then fail with HVDD_ECONNECT. */
#ifndef HVDD_CLIENT_H
#define HVDD_CLIENT_H

#include <jansson.h>
#include <stddef.h>

/* The longest hvdd holds one request (?wait=, a barrier, a registration):
 * the server's bound, and what its clients ask again after. */
#define HVDD_MAX_WAIT_MS 120000

#ifdef __cplusplus
extern "C" {
#endif

#define HVDD_ERRNO_MAP(X)                                                      \
    X(ENOMEM, -1, "out of memory")                                             \
    X(EINVAL, -2, "invalid argument")                                          \
    X(ECONNECT, -3, "cannot reach hvdd")                                       \
    X(ENOTFOUND, -4, "no such key")                                            \
    X(EREFUSED, -5, "hvdd refused the request")                                \
    X(ETIMEOUT, -6, "timed out")                                               \
    X(EABORTED, -7, "the job was aborted")                                     \
    X(EPROTO, -8, "unexpected answer from hvdd")                               \
    X(EGONE, -9, "not in the job's current round")

enum {
#define HVDD_ERRNO_ENUM(name, val, text) HVDD_##name = (val),
    HVDD_ERRNO_MAP(HVDD_ERRNO_ENUM)
#undef HVDD_ERRNO_ENUM
};

typedef struct hvdd_client hvdd_client;

/* What registration returns: the rank's identity and the network. */
typedef struct hvdd_identity {
    int rank, size, local_rank, local_size, cross_rank, cross_size;
    char host[256];
    char iface[64];
    char master_addr[256];
    int master_port;
    int round; /* the elastic round it belongs to (0: the first) */
    int fresh; /* that round has new workers (their state needs a sync) */
} hvdd_identity;

/* addr: a numeric IP address. token: the job token (may be NULL for the
 * key-value routes only). connect_deadline: seconds each call may spend
 * retrying a connection. Returns NULL when out of memory. The caller frees
 * the client with hvdd_client_free (NULL accepted). */
hvdd_client *hvdd_client_new(const char *addr, int port, const char *token,
                             double connect_deadline);
void hvdd_client_free(hvdd_client *c);

/* The detail of the last failure (owned by the client). */
const char *hvdd_client_error(const hvdd_client *c);
const char *hvdd_strerror(int code);

int hvdd_client_put(hvdd_client *c, const char *scope, const char *key,
                    const void *data, size_t len);
/* Gets a value; with wait_ms > 0 hvdd holds the request until the key
 * exists or the wait passes (then HVDD_ENOTFOUND), a wait longer than
 * hvdd's longest (HVDD_MAX_WAIT_MS) in several requests. *data is
 * malloc'd and NUL-terminated past *len; the caller frees it. */
int hvdd_client_get(hvdd_client *c, const char *scope, const char *key,
                    int wait_ms, char **data, size_t *len);
int hvdd_client_delete(hvdd_client *c, const char *scope, const char *key);

/* rank < 0: any free rank of host. Blocks while a standalone hvdd waits
 * for the other workers. */
int hvdd_client_register(hvdd_client *c, const char *host, int pid, int rank,
                         hvdd_identity *id);
/* Elastic: a worker of round `after` waits (up to wait_ms) for the next
 * round and its identity in it; HVDD_EGONE when it is not in it,
 * HVDD_ETIMEOUT when no round came. */
int hvdd_client_rejoin(hvdd_client *c, const char *host, int pid, int after,
                       long wait_ms, hvdd_identity *id);
/* From now on this client's register, barrier, heartbeat and exit calls
 * say they belong to round (hvdd refuses them once it is over); -1: say
 * nothing (the default). */
void hvdd_client_set_round(hvdd_client *c, int round);
int hvdd_client_barrier(hvdd_client *c, const char *name, int rank);
int hvdd_client_heartbeat(hvdd_client *c, int rank);
int hvdd_client_exit(hvdd_client *c, int rank, int code);
int hvdd_client_abort(hvdd_client *c, const char *reason);
/* POSTs j (taken, may be NULL only when out of memory) to /v1/<what>;
 * the JSON answer goes to *answer when answer is not NULL (the caller
 * decrefs it). For routes without a helper of their own (the agent's). */
int hvdd_client_post(hvdd_client *c, const char *what, json_t *j,
                     long timeout_ms, json_t **answer);
/* GET /v1/status; *json is malloc'd, the caller frees it. */
int hvdd_client_status(hvdd_client *c, char **json);

#ifdef __cplusplus
}
#endif

#endif
