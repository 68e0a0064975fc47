/* coll_init: the identity hvdrun puts in the environment. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collective.h"
#include "comm.h"

/* Why this thread's last coll_init failed; see coll_last_error(NULL). */
_Thread_local char coll_init_detail[512];

/* Reads the first of two variable names that is set. Returns 1 when found,
 * 0 when neither is set, -1 when the value is not a number >= min. */
static int
read_var(const char *horovod, const char *torch, int min, int *out)
{
    const char *name = horovod, *v = getenv(horovod);
    char *end;
    long n;

    if (v == NULL && torch != NULL)
        v = getenv(name = torch);
    if (v == NULL)
        return 0;
    errno = 0;
    n = strtol(v, &end, 10);
    if (errno || end == v || *end || n < min || n > 1 << 30) {
        snprintf(coll_init_detail, sizeof(coll_init_detail),
                 "%s='%s' is not a number >= %d", name, v, min);
        return -1;
    }
    *out = (int)n;
    return 1;
}

static int
read_identity(coll_comm *c)
{
    static const struct {
        const char *horovod, *torch;
        int min;
        size_t off;
    } vars[] = {
        {"HOROVOD_RANK", "RANK", 0, offsetof(coll_comm, rank)},
        {"HOROVOD_SIZE", "WORLD_SIZE", 1, offsetof(coll_comm, size)},
        {"HOROVOD_LOCAL_RANK", "LOCAL_RANK", 0,
         offsetof(coll_comm, local_rank)},
        {"HOROVOD_LOCAL_SIZE", "LOCAL_WORLD_SIZE", 1,
         offsetof(coll_comm, local_size)},
        {"HOROVOD_CROSS_RANK", "GROUP_RANK", 0,
         offsetof(coll_comm, cross_rank)},
        {"HOROVOD_CROSS_SIZE", "GROUP_WORLD_SIZE", 1,
         offsetof(coll_comm, cross_size)},
    };
    int found = 0, r;

    for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
        int *field = (int *)((char *)c + vars[i].off);
        if ((r = read_var(vars[i].horovod, vars[i].torch, vars[i].min, field)) <
            0)
            return COLL_EIDENTITY;
        found += r;
    }
    if (found == 0) { /* not started by a launcher: a job of one */
        c->size = c->local_size = c->cross_size = 1;
        return 0;
    }
    if (c->local_size < 0) { /* no local variables: one host */
        c->local_rank = c->rank;
        c->local_size = c->size;
    }
    if (c->cross_size < 0) {
        c->cross_rank = 0;
        c->cross_size = 1;
    }
    if (found < 2 || c->rank >= c->size || c->local_rank >= c->local_size ||
        c->cross_rank >= c->cross_size || c->local_size > c->size) {
        snprintf(coll_init_detail, sizeof(coll_init_detail),
                 "inconsistent identity: rank %d of %d, local %d of %d, "
                 "cross %d of %d",
                 c->rank, c->size, c->local_rank, c->local_size, c->cross_rank,
                 c->cross_size);
        return COLL_EIDENTITY;
    }
    return 0;
}

/* Gloo writes to its sockets without MSG_NOSIGNAL: a write to a peer
 * that just died raised SIGPIPE and killed this rank (seen in 1 of 6
 * runs of the dead-peer test) where the caller must get an error. A
 * handler the program set stays; Python ignores SIGPIPE already. */
static void
ignore_sigpipe(void)
{
    struct sigaction old, ign = {.sa_handler = SIG_IGN};

    if (sigaction(SIGPIPE, NULL, &old) == 0 && old.sa_handler == SIG_DFL &&
        !(old.sa_flags & SA_SIGINFO))
        sigaction(SIGPIPE, &ign, NULL);
}

int
coll_init(coll_comm **out)
{
    coll_comm *c;
    int r;

    coll_init_detail[0] = '\0';
    if (out == NULL)
        return COLL_EINVAL;
    *out = NULL;
    if ((c = calloc(1, sizeof(*c))) == NULL)
        return COLL_ENOMEM;
    c->refs = 1;
    /* Without local/cross variables a job is one host. */
    c->local_size = c->cross_size = -1;
    if ((r = read_identity(c)) != 0) {
        free(c);
        return r;
    }
    ignore_sigpipe();
    if ((r = comm_connect(c)) != 0 || (r = comm_timeline_open(c)) != 0) {
        snprintf(coll_init_detail, sizeof(coll_init_detail), "%s",
                 c->last_error);
        comm_disconnect(c);
        free(c);
        return r;
    }
    *out = c;
    return 0;
}

void
comm_release(coll_comm *c)
{
    if (__atomic_sub_fetch(&c->refs, 1, __ATOMIC_ACQ_REL) == 0)
        free(c);
}

int
coll_finalize(coll_comm *c)
{
    if (c == NULL)
        return 0;
    comm_disconnect(c);
    /* (the requests still out keep it for coll_wait: any other call on it
     * is refused, not run on the transports just freed) */
    c->dead = 1;
    snprintf(c->last_error, sizeof(c->last_error), "coll_finalize was called");
    comm_release(c);
    return 0;
}
