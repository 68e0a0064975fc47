/* libcollective: what a worker started by hvdrun links to learn who it is
 * and, in later versions, to sum, gather and broadcast with its peers.
 *
 * Every function returns 0 or a negative COLL_E* code; coll_strerror()
 * names a code and coll_last_error() gives the detail of a comm's last
 * failure. The library never prints and never exits. */
#ifndef COLLECTIVE_H
#define COLLECTIVE_H

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define COLL_API __attribute__((visibility("default")))
#else
#define COLL_API
#endif

/* The error codes; the list only grows. */
#define COLL_ERRNO_MAP(X)                                                      \
    X(ENOMEM, -1, "out of memory")                                             \
    X(EINVAL, -2, "invalid argument")                                          \
    X(EIDENTITY, -3, "bad job identity in the environment")

enum {
#define COLL_ERRNO_ENUM(name, val, text) COLL_##name = (val),
    COLL_ERRNO_MAP(COLL_ERRNO_ENUM)
#undef COLL_ERRNO_ENUM
};

/* One process's membership in the job. Opaque. */
typedef struct coll_comm coll_comm;

/* Reads the identity hvdrun gave (HOROVOD_RANK, HOROVOD_SIZE, ...; or
 * torchrun's RANK, WORLD_SIZE, ...). A process started without either is
 * a job of one, as in Horovod. A partial or inconsistent identity fails
 * with COLL_EIDENTITY; coll_last_error(NULL) then says why. On success
 * *out is a new comm that the caller frees with coll_finalize. */
COLL_API int coll_init(coll_comm **out);

/* Frees the comm; accepts NULL. */
COLL_API int coll_finalize(coll_comm *c);

/* The identity; each returns -1 for a NULL comm. */
COLL_API int coll_rank(const coll_comm *c);
COLL_API int coll_size(const coll_comm *c);
COLL_API int coll_local_rank(const coll_comm *c);
COLL_API int coll_local_size(const coll_comm *c);
COLL_API int coll_cross_rank(const coll_comm *c);
COLL_API int coll_cross_size(const coll_comm *c);

/* Static text for a code; never NULL. */
COLL_API const char *coll_strerror(int err);

/* The detail of the comm's last failure, or "" (owned by the comm). With
 * NULL: the detail of this thread's last failed coll_init. */
COLL_API const char *coll_last_error(const coll_comm *c);

#ifdef __cplusplus
}
#endif

#endif
