/* The segment: a memfd that rank 0 makes (mode 0600, never a name in
 * /dev/shm, so nothing is left there whatever ends the job) and the other
 * ranks of its host open as /proc/PID/fd/FD, which the kernel allows only
 * to processes of the same user (the ptrace check, then the mode). Where
 * it is ("PID FD NONCE") goes under shm/<prefix> in hvdd's store, a scope
 * that needs the job token; the nonce, also in the segment's header,
 * proves a rank opened the segment it was told of and not a reused pid's.
 * Once every rank has mapped it, every descriptor is closed: the mapping
 * alone holds the memory, freed when the last rank ends. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "hvd_clock.h"
#include "hvdd_client.h"
#include "shm.h"

#define SHM_MAGIC 0x68766473686d3031ull /* "hvdshm01" */
/* The most memory a host's segment takes: beyond it the sub-blocks
 * shrink (down to one cache line). */
#define SHM_SEGMENT_MOST (64u << 20)

/* The areas for sub-blocks of sub bytes. */
static void
layout(shm_transport *t, size_t sub)
{
    size_t p = (size_t)t->base.size;
    size_t lines = 2 * SHM_LINE + p * SHM_LINE;

    t->sub = sub;
    t->area = (p + 1) * sub;
    lines = (lines + 4095) / 4096 * 4096;
    t->seg_bytes = lines + 2 * p * t->area;
}

void
shm_geometry(shm_transport *t)
{
    size_t p = (size_t)t->base.size;
    size_t sub = (t->spec.cpu_each ? SHM_SUBS_BYTES : SHM_SUBS_SHARED) / p;
    size_t most = SHM_SEGMENT_MOST / (2 * p * (p + 1));

    if (sub > most)
        sub = most;
    sub = sub / SHM_LINE * SHM_LINE;
    layout(t, sub < SHM_LINE ? SHM_LINE : sub);
}

static int
fail(char *err, size_t errlen, const char *what, const char *fmt,
     const char *detail)
{
    char buf[256];

    snprintf(buf, sizeof(buf), fmt, detail);
    snprintf(err, errlen, "%s: shared memory: %s", what, buf);
    return COLL_ETRANSPORT;
}

/* Maps every page now (MAP_POPULATE): a slot's first use took a fault
 * per page, so that an allreduce's first calls at a new size were ten
 * times slower than the rest (1 MiB on 2 ranks: 700 us against 65). */
static int
map(shm_transport *t, int fd)
{
    void *m = mmap(NULL, t->seg_bytes, PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_POPULATE, fd, 0);

    if (m == MAP_FAILED)
        return -1;
    /* a rank's forked children (data loaders) do not get it */
    madvise(m, t->seg_bytes, MADV_DONTFORK);
    t->seg = m;
    t->head = m;
    t->lines = t->seg + 2 * SHM_LINE;
    t->slots = t->seg + (t->seg_bytes - 2 * (size_t)t->base.size * t->area);
    return 0;
}

static void
hex(char *out, const unsigned char *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        snprintf(out + 2 * i, 3, "%02x", b[i]);
}

/* Rank 0: makes, maps and describes the segment; *fd stays open until
 * every rank has opened it. */
static int
create(shm_transport *t, int *fd, char *where, size_t wlen)
{
    char nonce[33];

    *fd = (int)syscall(SYS_memfd_create, "hvd-collective",
                       MFD_CLOEXEC | MFD_ALLOW_SEALING);
    /* its memory taken now, not page by page in the collectives; sealed
     * at its size: nobody who opens it can shrink it under the ranks'
     * mappings */
    if (*fd < 0 || fchmod(*fd, 0600) != 0 ||
        ftruncate(*fd, (off_t)t->seg_bytes) != 0 ||
        fallocate(*fd, 0, 0, (off_t)t->seg_bytes) != 0 ||
        fcntl(*fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) !=
            0 ||
        map(t, *fd) != 0)
        return -1;
    t->head->magic = SHM_MAGIC;
    t->head->size = (uint32_t)t->base.size;
    t->head->sub = (uint32_t)t->sub;
    t->head->bytes = t->seg_bytes;
    if (getrandom(t->head->nonce, sizeof(t->head->nonce), 0) !=
        (ssize_t)sizeof(t->head->nonce))
        return -1;
    hex(nonce, t->head->nonce, sizeof(t->head->nonce));
    snprintf(where, wlen, "%d %d %s", (int)getpid(), *fd, nonce);
    return 0;
}

/* The others: opens and maps what rank 0 published, and checks it is
 * the segment rank 0 made for this transport. */
static int
open_published(shm_transport *t, const char *where, const char *what, char *err,
               size_t errlen)
{
    char path[64], nonce[33], mine[33];
    int pid, fd, n;
    struct stat st;
    shm_header head;

    if (sscanf(where, "%d %d %32s%n", &pid, &fd, nonce, &n) != 3)
        return fail(err, errlen, what, "rank 0 published '%.60s'", where);
    snprintf(path, sizeof(path), "/proc/%d/fd/%d", pid, fd);
    t->pid[0] = pid;
    if ((fd = open(path, O_RDWR | O_CLOEXEC)) < 0)
        return fail(err, errlen, what,
                    "cannot open rank 0's segment: %s (a rank of another "
                    "user, or of another PID namespace? COLL_SHM=0 turns "
                    "shared memory off)",
                    strerror(errno));
    /* rank 0 chose the sub-blocks (from its CPUs): this rank takes them */
    n = pread(fd, &head, sizeof(head), 0) == (ssize_t)sizeof(head) &&
        head.magic == SHM_MAGIC && head.size == (uint32_t)t->base.size &&
        head.sub >= SHM_LINE && head.sub % SHM_LINE == 0 &&
        head.sub <= SHM_SUBS_BYTES;
    if (n)
        layout(t, head.sub);
    n = n && fstat(fd, &st) == 0 && (size_t)st.st_size == t->seg_bytes &&
        map(t, fd) == 0;
    close(fd);
    if (!n)
        return fail(err, errlen, what, "rank 0's segment: %s",
                    "not the size this rank expects");
    hex(mine, t->head->nonce, sizeof(t->head->nonce));
    if (t->head->magic != SHM_MAGIC ||
        t->head->size != (uint32_t)t->base.size ||
        t->head->sub != (uint32_t)t->sub || strcmp(mine, nonce) != 0)
        return fail(err, errlen, what, "rank 0's segment: %s",
                    "not the one it published");
    return 0;
}

static int
lookup(shm_transport *t, hvdd_client *kv, const char *key, char **where,
       const char *what, char *err, size_t errlen)
{
    double deadline = hvd_mono_now() + t->spec.timeout_ms / 1000.0;
    size_t len;
    int rc;

    do { /* hvdd holds a request 30 s at most */
        int left = (int)((deadline - hvd_mono_now()) * 1000);
        rc = hvdd_client_get(kv, "shm", key, left < 30000 ? left : 30000, where,
                             &len);
    } while (rc == HVDD_ENOTFOUND && hvd_mono_now() < deadline);
    return rc == 0 ? 0
                   : fail(err, errlen, what, "where rank 0's segment is: %s",
                          hvdd_client_error(kv));
}

/* pidfds of every peer, so that a wait sees one die. */
static void
watch_peers(shm_transport *t)
{
    for (int k = 0; k < t->base.size; k++) {
        t->pid[k] = shm_line_of(t, k)->pid;
        if (k != t->base.rank && t->pidfd[k] < 0)
            t->pidfd[k] = (int)syscall(SYS_pidfd_open, t->pid[k], 0);
    }
}

int
shm_attach(shm_transport *t, const char *what, char *err, size_t errlen)
{
    hvdd_client *kv = t->spec.open_store ? t->spec.open_store() : NULL;
    char key[128], where[128], *published = NULL;
    int fd = -1, r;

    if (kv == NULL) {
        snprintf(err, errlen, "%s: out of memory", what);
        return COLL_ENOMEM;
    }
    snprintf(key, sizeof(key), "%s", t->spec.prefix);
    if (t->base.rank == 0) {
        r = create(t, &fd, where, sizeof(where)) != 0
                ? fail(err, errlen, what, "making the segment: %s",
                       strerror(errno))
                : 0;
        if (r == 0 &&
            hvdd_client_put(kv, "shm", key, where, strlen(where)) != 0)
            r = fail(err, errlen, what, "publishing the segment: %s",
                     hvdd_client_error(kv));
    } else if ((r = lookup(t, kv, key, &published, what, err, errlen)) == 0) {
        r = open_published(t, published, what, err, errlen);
        t->pidfd[0] = (int)syscall(SYS_pidfd_open, t->pid[0], 0);
    }
    free(published);
    if (r == 0) {
        shm_line_of(t, t->base.rank)->pid = (int32_t)getpid();
        r = shm_step(t, what, err, errlen); /* every rank has it mapped */
    }
    if (r == 0)
        watch_peers(t);
    if (fd >= 0)
        close(fd);
    if (t->base.rank == 0 && r == 0)
        hvdd_client_delete(kv, "shm", key);
    hvdd_client_free(kv);
    return r;
}

void
shm_detach(shm_transport *t)
{
    if (t->seg)
        munmap(t->seg, t->seg_bytes);
    t->seg = NULL;
    for (int k = 0; t->pidfd && k < t->base.size; k++)
        if (t->pidfd[k] >= 0)
            close(t->pidfd[k]);
}
