#include "fusion.h"

#include <math.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "comm.h"
#include "hvd_clock.h"
#include "device.h"
#include "stall.h"
#include "timeline_events.h"

#define MAX_PER_CYCLE 4096

/* What a rank tells the others about one queued request. */
typedef struct entry {
    int64_t id, count, dt, op, kind, root;
} entry;

static void
finish(fusion *f, coll_request *q, int result, const char *why)
{
    coll_request **pp;

    for (pp = &f->pending; *pp && *pp != q; pp = &(*pp)->next)
        ;
    if (*pp)
        *pp = q->next;
    q->result = result;
    snprintf(q->error, sizeof(q->error), "%.255s", why ? why : "");
    q->done = 1;
}

/* The transport failed: every pending request fails with it. */
static void
fail_all(fusion *f, int code, const char *why)
{
    pthread_mutex_lock(&f->mu);
    f->dead = 1;
    snprintf(f->error, sizeof(f->error), "%s", why);
    while (f->pending)
        finish(f, f->pending, code, why);
    pthread_cond_broadcast(&f->changed);
    pthread_mutex_unlock(&f->mu);
}

/* This rank's queue, oldest first (the list is newest first). */
static int
snapshot(fusion *f, coll_request **mine, entry *out, int *stopping)
{
    int n = 0;

    pthread_mutex_lock(&f->mu);
    for (coll_request *q = f->pending; q; q = q->next)
        n++;
    if (n > MAX_PER_CYCLE)
        n = MAX_PER_CYCLE;
    int i = n;
    for (coll_request *q = f->pending; q && i > 0; q = q->next) {
        mine[--i] = q;
        /* ranks that disagree on where the buffer lives disagree on dt */
        out[i] = (entry){(int64_t)q->id,
                         (int64_t)q->count,
                         q->dt + (q->on_device ? DEV_ON_DEVICE : 0),
                         q->op,
                         q->kind,
                         q->root};
    }
    *stopping = f->stopping;
    if (f->joining && f->joined_at == 0)
        f->joined_at = f->cycle + 1; /* cycles are in step on every rank */
    pthread_mutex_unlock(&f->mu);
    return n;
}

/* Every rank's queue: all[k] points into flat, n[k] entries. Returns 0, or
 * a code after failing everything. *all_stop: every rank is stopping.
 * The counts go as an allgather of this rank's header, and the entries
 * only when some rank has any (both in log2(size) steps on the thread's
 * TCP ring and its chords): an idle cycle is one small exchange. */
static int
exchange(fusion *f, const entry *mine, int nmine, int stopping, entry *flat,
         int *n, int *all_stop)
{
    int64_t *hdrs = f->hdrs;
    size_t *bytes = f->bytes, total = 0;
    char err[512];
    int r;

    hdrs[3 * f->rank] = nmine;
    hdrs[3 * f->rank + 1] = stopping;
    hdrs[3 * f->rank + 2] = f->joined_at;
    r = f->net->ops->exchange(f->net, hdrs, 3 * sizeof(int64_t),
                              3 * sizeof(int64_t), "fusion cycle", err,
                              sizeof(err));
    *all_stop = 1;
    for (int k = 0; r == 0 && k < f->size; k++) {
        n[k] = (int)hdrs[3 * k];
        bytes[k] = (size_t)n[k] * sizeof(entry);
        total += bytes[k];
        *all_stop &= hdrs[3 * k + 1] != 0;
        f->joined[k] = hdrs[3 * k + 2];
    }
    if (r == 0 && total)
        r = f->net->ops->allgatherv(f->net, mine, flat, bytes, "fusion cycle",
                                    err, sizeof(err));
    if (r != 0)
        fail_all(f, r, err);
    return r;
}

/* Rank k's entry for id, or NULL. */
static const entry *
find(const entry *list, int n, int64_t id)
{
    for (int i = 0; i < n; i++)
        if (list[i].id == id)
            return &list[i];
    return NULL;
}

/* This rank's request for id. Looks at the snapshot's entries, not at the
 * requests: one finished earlier in the cycle may be freed already. */
static coll_request *
mine_of(const entry *ids, coll_request **mine, int nmine, int64_t id)
{
    for (int i = 0; i < nmine; i++)
        if (ids[i].id == id)
            return mine[i];
    return NULL;
}

/* 1: every rank that has not joined queued e (lead is the first of
 * them); 0: some rank not yet; -1: they disagree. */
static int
readiness(const fusion *f, int lead, const entry *e, entry *const *lists,
          const int *n)
{
    for (int k = lead + 1; k < f->size; k++) {
        const entry *o;
        if (f->joined[k])
            continue;
        o = find(lists[k], n[k], e->id);
        if (o == NULL)
            return 0;
        if (o->count != e->count || o->dt != e->dt || o->op != e->op ||
            o->kind != e->kind || o->root != e->root)
            return -1;
    }
    return 1;
}

/* An async allgather or broadcast: on the thread's transport (host
 * buffers only). */
static int
run_other(fusion *f, coll_request *q, char *err, size_t errlen)
{
    size_t bytes = q->count * coll_dtype_size(q->dt);

    if (bytes == 0) /* every rank agreed on the count */
        return 0;
    if (q->kind == REQ_BROADCAST && comm_hier_broadcast_wanted(f->comm))
        return comm_hier_broadcast(f->comm, &f->hier, f->net, ".async", q->recv,
                                   bytes, q->root, err, errlen);
    if (q->kind == REQ_BROADCAST)
        return f->net->ops->broadcast(f->net, q->recv, bytes, q->root, err,
                                      errlen);
    if (comm_hier_gather_wanted(f->comm))
        return comm_hier_allgather(f->comm, &f->hier, f->net, ".async", q->send,
                                   q->recv, bytes, err, errlen);
    return transport_allgather(f->net, q->send, q->recv, bytes, "allgather",
                               err, errlen);
}

/* A group of device requests: one NCCL allreduce of a device fusion
 * buffer, on the thread's own communicator. */
static int
run_on_device(fusion *f, coll_request **g, int ng, char *err, size_t errlen)
{
    dev_peers peers = {NULL, f->dev_key, f->rank, f->size,
                       (int)(f->timeout_s * 1000)};
    dev_piece *piece;
    int r;

    if (f->kv == NULL && (f->kv = comm_new_client()) == NULL)
        return COLL_ENOMEM;
    if ((piece = malloc((size_t)ng * sizeof(*piece))) == NULL)
        return COLL_ENOMEM;
    for (int i = 0; i < ng; i++)
        piece[i] = (dev_piece){g[i]->send, g[i]->recv, g[i]->count, g[i]->name};
    peers.kv = f->kv;
    r = dev_fused_allreduce(&f->dev, &peers, piece, ng, g[0]->dt, g[0]->op,
                            f->threshold, err, errlen);
    free(piece);
    return r;
}

/* One collective for a group of requests of one type and op: on the
 * host, the transport takes the requests' buffers as one (the TCP ring
 * copies nothing; Gloo packs them into one buffer); on GPUs they are
 * packed into a device fusion buffer. */
static int
run_group(fusion *f, coll_request **g, int ng, char *err, size_t errlen)
{
    transport_piece *piece;
    int r;

    if (g[0]->kind != REQ_ALLREDUCE)
        return run_other(f, g[0], err, errlen);
    if (g[0]->on_device)
        return run_on_device(f, g, ng, err, errlen);
    if ((piece = malloc((size_t)ng * sizeof(*piece))) == NULL)
        return COLL_ENOMEM;
    for (int i = 0; i < ng; i++)
        piece[i] = (transport_piece){g[i]->send, g[i]->recv, g[i]->count};
    r = comm_hier_wanted(f->comm)
            ? comm_hier_allreduce(f->comm, &f->hier, f->net, ".async", piece,
                                  ng, g[0]->dt, g[0]->op, err, errlen)
            : f->net->ops->allreduce(f->net, piece, ng, g[0]->dt, g[0]->op, err,
                                     errlen);
    free(piece);
    return r;
}

/* What a rank that has joined gives to a request it did not queue: zeros
 * of the same size (Horovod's join). NULL when out of memory. */
static coll_request *
stand_in(const entry *e)
{
    coll_request *q = calloc(1, sizeof(*q));
    size_t bytes = (size_t)e->count * coll_dtype_size((coll_dtype)e->dt);

    if (q == NULL || (q->recv = calloc(1, bytes ? bytes : 1)) == NULL) {
        free(q);
        return NULL;
    }
    q->send = q->recv;
    q->id = (uint64_t)e->id;
    q->count = (size_t)e->count;
    q->dt = (coll_dtype)e->dt;
    q->op = (coll_op)e->op;
    q->kind = REQ_ALLREDUCE;
    q->stand_in = 1;
    return q;
}

static void
free_stand_in(coll_request *q)
{
    free(q->recv);
    free(q);
}

/* The timeline's name for where a group goes. */
static const char *
wire_of(const fusion *f, coll_request *const *g)
{
    if (g[0]->on_device)
        return "nccl";
    if (g[0]->kind == REQ_ALLREDUCE && comm_hier_wanted(f->comm))
        return "hierarchical";
    return f->net->ops->name;
}

static int
run_and_finish(fusion *f, coll_request **g, int ng)
{
    char err[512];
    int r;

    for (int i = 0; f->tl && i < ng; i++)
        tl_fusion_wire(f->tl, (int64_t)g[i]->id, wire_of(f, g));
    r = run_group(f, g, ng, err, sizeof(err));
    for (int i = 0; i < ng; i++) {
        tl_fusion_done(f->tl, (int64_t)g[i]->id, r == 0, g[i]->dt,
                       (int64_t)g[i]->count);
        stall_forget(f->stall, (int64_t)g[i]->id);
    }
    if (r != 0) {
        for (int i = 0; i < ng; i++)
            if (g[i]->stand_in)
                free_stand_in(g[i]);
        fail_all(f, r == COLL_ENOMEM ? r : COLL_ETRANSPORT,
                 r == COLL_ENOMEM ? "out of memory" : err);
        return r;
    }
    pthread_mutex_lock(&f->mu);
    for (int i = 0; i < ng; i++)
        if (g[i]->stand_in)
            free_stand_in(g[i]);
        else
            finish(f, g[i], 0, NULL);
    pthread_cond_broadcast(&f->changed);
    pthread_mutex_unlock(&f->mu);
    return 0;
}

static void
refuse(fusion *f, coll_request *q, int code, const char *why)
{
    tl_fusion_done(f->tl, (int64_t)q->id, 0, 0, 0);
    stall_forget(f->stall, (int64_t)q->id);
    pthread_mutex_lock(&f->mu);
    finish(f, q, code, why);
    pthread_cond_broadcast(&f->changed);
    pthread_mutex_unlock(&f->mu);
}

/* The request of this rank for e that the cycle runs: its own, or, once
 * this rank has joined, zeros in its place for another rank's allreduce.
 * NULL: none here (or refused). */
static coll_request *
take_part(fusion *f, int ready, int anyone_joined, const entry *e,
          const entry *ids, coll_request **mine, int nmine)
{
    coll_request *q = mine_of(ids, mine, nmine, e->id);

    if (ready < 0) {
        if (q)
            refuse(f, q, COLL_EMISMATCH,
                   "ranks queued this name with different operations, "
                   "counts, types, ops or roots");
        return NULL;
    }
    /* as Horovod's: with a rank joined, only host allreduces go on */
    if (anyone_joined &&
        (e->kind != REQ_ALLREDUCE || (e->dt & DEV_ON_DEVICE))) {
        if (q)
            refuse(f, q, COLL_ENOTSUP,
                   "only allreduces of host buffers run while a rank has "
                   "joined");
        return NULL;
    }
    if (q == NULL && f->joined_at && e->kind == REQ_ALLREDUCE)
        q = stand_in(e);
    else if (q)
        tl_fusion_start(f->tl, e->id);
    return q;
}

/* Runs, in the first unjoined rank's order, every request that every
 * rank that has not joined has queued, fusing neighbours of the same type
 * and op up to the threshold. */
static int
run_ready(fusion *f, entry *const *lists, const int *n, const entry *ids,
          coll_request **mine, int nmine, coll_request **group)
{
    size_t bytes = 0;
    int ng = 0, lead = 0, anyone_joined = 0;

    for (int k = 0; k < f->size; k++)
        anyone_joined |= f->joined[k] != 0;
    while (lead < f->size && f->joined[lead])
        lead++;
    for (int i = 0; lead < f->size && i < n[lead]; i++) {
        const entry *e = &lists[lead][i];
        int ready = readiness(f, lead, e, lists, n);
        coll_request *q =
            ready ? take_part(f, ready, anyone_joined, e, ids, mine, nmine)
                  : NULL;
        size_t b;
        if (q == NULL)
            continue;
        b = q->count * coll_dtype_size(q->dt);
        /* allgathers and broadcasts go alone, allreduces in groups */
        if (ng &&
            (group[0]->kind != REQ_ALLREDUCE || q->kind != REQ_ALLREDUCE ||
             group[0]->dt != q->dt || group[0]->op != q->op ||
             group[0]->on_device != q->on_device || bytes + b > f->threshold)) {
            if (run_and_finish(f, group, ng) != 0)
                return -1;
            ng = 0;
            bytes = 0;
        }
        group[ng++] = q;
        bytes += b;
    }
    return ng ? run_and_finish(f, group, ng) : 0;
}

/* Once every rank has joined: the join is over, and the last to join
 * (the latest cycle; of those, the highest rank) is its result. */
static void
end_join(fusion *f)
{
    int last = 0;

    for (int k = 0; k < f->size; k++) {
        if (f->joined[k] == 0)
            return;
        if (f->joined[k] >= f->joined[last])
            last = k;
    }
    pthread_mutex_lock(&f->mu);
    f->join_done = 1;
    f->join_last = last;
    f->joining = 0;
    f->joined_at = 0;
    pthread_cond_broadcast(&f->changed);
    pthread_mutex_unlock(&f->mu);
}

/* "1, 4 and 6" (the first few) into out. */
static void
name_ranks(const int *rank, int n, char *out, size_t len)
{
    size_t at = 0;

    out[0] = '\0';
    for (int i = 0; i < n && i < 4 && at < len; i++)
        at += (size_t)snprintf(out + at, len - at, "%s%d",
                               i == 0       ? ""
                               : i == n - 1 ? " and "
                                            : ", ",
                               rank[i]);
    if (n > 4 && at < len)
        snprintf(out + at, len - at, " and %d more", n - 4);
}

/* For rank 0's stall warning: the name of a request of this rank that
 * some rank lacks, in hvdd's store (rank 0 knows only its own names). */
static void
publish_name(fusion *f, coll_request *q)
{
    char key[80];

    q->stall_named = 1;
    snprintf(key, sizeof(key), "%s-%016llx", f->stall_prefix,
             (unsigned long long)q->id);
    if (f->stall_client)
        hvdd_client_put(f->stall_client, "stall", key, q->name,
                        strlen(q->name));
}

/* Rank 0: a request's name, from its own queue or from the rank that
 * put it in hvdd's store. */
typedef struct name_ctx {
    fusion *f;
    const entry *ids;
    coll_request **mine;
    int nmine;
    char buf[8][128];
    int used;
} name_ctx;

static const char *
name_of(void *arg, int64_t id)
{
    name_ctx *x = arg;
    coll_request *q = mine_of(x->ids, x->mine, x->nmine, id);
    char key[80], *data = NULL;
    size_t len;

    if (q)
        return q->name;
    if (x->f->stall_client == NULL || x->used == 8)
        return NULL;
    snprintf(key, sizeof(key), "%s-%016llx", x->f->stall_prefix,
             (unsigned long long)id);
    if (hvdd_client_get(x->f->stall_client, "stall", key, 0, &data, &len) != 0)
        return NULL;
    snprintf(x->buf[x->used], sizeof(x->buf[0]), "%.*s", (int)len, data);
    free(data);
    return x->buf[x->used++];
}

/* Rank 0, each cycle: Horovod's stall check, its warning through hvdd to
 * the launcher's output, and the job's stop past the shutdown time. */
static void
check_stalls(fusion *f, const entry *ids, coll_request **mine, int nmine)
{
    double now = hvd_mono_now();
    char text[4000], reason[300];
    name_ctx x = {.f = f, .ids = ids, .mine = mine, .nmine = nmine};
    int shutdown;

    if (!stall_report(f->stall, now, name_of, &x, text, sizeof(text), &shutdown,
                      reason, sizeof(reason)) ||
        f->stall_client == NULL)
        return;
    hvdd_client_post(f->stall_client, "warn", json_pack("{ss}", "text", text),
                     5000, NULL);
    if (shutdown)
        hvdd_client_abort(f->stall_client, reason);
}

/* This rank's requests that some rank has still not queued, a timeout
 * after they were queued here, fail with COLL_EMISMATCH, naming the ranks
 * that have not: waiting longer would be a hang (a rank that never queues
 * the name), as a blocking call whose peers never come gives up after the
 * timeout too. The transport is fine, so the comm stays usable; a rank
 * that queues the name later waits for the others in vain and fails the
 * same way. Only requests no group took this cycle are looked at: those
 * are still pending, so not freed. */
static void
expire_stalled(fusion *f, entry *const *lists, const int *n, const entry *ids,
               coll_request **mine, int nmine, int *missing)
{
    double now = hvd_mono_now();
    char who[96], why[256];

    for (int i = 0; i < nmine; i++) {
        int m = 0;
        for (int k = 0; k < f->size; k++)
            if (k != f->rank && !f->joined[k] &&
                find(lists[k], n[k], ids[i].id) == NULL)
                missing[m++] = k;
        /* (at half the warning time: there when rank 0 warns) */
        if (m > 0 && f->rank != 0 && f->stall_warn_s > 0 &&
            !mine[i]->stall_named &&
            now - mine[i]->queued_at > f->stall_warn_s / 2)
            publish_name(f, mine[i]);
        if (m == 0 || now - mine[i]->queued_at < f->expire_s)
            continue;
        name_ranks(missing, m, who, sizeof(who));
        tl_fusion_done(f->tl, ids[i].id, 0, 0, 0);
        stall_forget(f->stall, ids[i].id);
        snprintf(why, sizeof(why), "rank%s %s did not queue it within %.0f s",
                 m > 1 ? "s" : "", who, f->expire_s);
        pthread_mutex_lock(&f->mu);
        finish(f, mine[i], COLL_EMISMATCH, why);
        pthread_cond_broadcast(&f->changed);
        pthread_mutex_unlock(&f->mu);
    }
}

/* Rank 0, each cycle: who has queued what, as the exchange shows, for the
 * timeline and the stall check. Rank 0's own list is its snapshot, in
 * order, so its names come from its requests by position; the others'
 * ids wait for rank 0's request of the same id. */
static void
watch_queues(fusion *f, entry *const *lists, const int *n, coll_request **mine)
{
    double now = hvd_mono_now();
    int busy = 0;

    stall_cycle_begin(f->stall);
    for (int k = 0; k < f->size; k++)
        for (int i = 0; i < n[k]; i++) {
            const entry *e = &lists[k][i];
            tl_fusion_seen(f->tl, e->id, (int)e->kind, k,
                           k == f->rank ? mine[i]->name : NULL);
            stall_seen(f->stall, e->id, k, now);
            busy = 1;
        }
    if (f->mark_cycles)
        tl_fusion_mark(f->tl, busy);
}

static void
sleep_ms(double ms)
{
    struct timespec ts = {
        (time_t)(ms / 1000),
        (long)((ms - (double)(time_t)(ms / 1000) * 1000) * 1e6)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static void *
fusion_main(void *arg)
{
    fusion *f = arg;
    entry *mine_e = calloc(MAX_PER_CYCLE, sizeof(entry));
    entry *flat = calloc((size_t)f->size * MAX_PER_CYCLE, sizeof(entry));
    entry **lists = calloc((size_t)f->size, sizeof(*lists));
    coll_request **mine = calloc(MAX_PER_CYCLE, sizeof(*mine));
    coll_request **group = calloc(MAX_PER_CYCLE, sizeof(*group));
    int *n = calloc((size_t)f->size, sizeof(*n)), stopping, all_stop;
    int *missing = calloc((size_t)f->size, sizeof(*missing));

    if (!mine_e || !flat || !lists || !mine || !group || !n || !missing)
        fail_all(f, COLL_ENOMEM, "out of memory");
    double next = hvd_mono_now();

    while (!f->dead) {
        /* a cycle starts every cycle_ms, as Horovod's do: after one that
         * ran groups for longer, the next starts at once */
        double now = hvd_mono_now();
        next += f->cycle_ms / 1e3;
        if (next > now)
            sleep_ms((next - now) * 1e3);
        else
            next = now;
        int nmine = snapshot(f, mine, mine_e, &stopping);
        if (exchange(f, mine_e, nmine, stopping, flat, n, &all_stop) != 0)
            break;
        for (int k = 0, off = 0; k < f->size; off += n[k++])
            lists[k] = flat + off;
        if (f->tl || f->stall)
            watch_queues(f, lists, n, mine);
        if (f->stall)
            check_stalls(f, mine_e, mine, nmine);
        if (all_stop) {
            fail_all(f, COLL_EDEAD, "finalized before every rank queued it");
            break;
        }
        if (run_ready(f, lists, n, mine_e, mine, nmine, group) != 0)
            break;
        expire_stalled(f, lists, n, mine_e, mine, nmine, missing);
        tl_fusion_flush(f->tl);
        end_join(f);
        f->cycle++;
    }
    pthread_mutex_lock(&f->mu);
    f->stopped = 1;
    pthread_cond_broadcast(&f->changed);
    pthread_mutex_unlock(&f->mu);
    free(mine_e);
    free(flat);
    free(lists);
    free(mine);
    free(group);
    free(n);
    free(missing);
    return NULL;
}

static double
env_double(const char *name, double dflt)
{
    const char *v = getenv(name);
    char *end;
    double d;

    if (v == NULL || *v == '\0')
        return dflt;
    d = strtod(v, &end);
    return *end || !isfinite(d) || d < 0 ? dflt : d;
}

/* What start made, in the order it made it; f may be half made. */
static void
fusion_free(fusion *f)
{
    if (f == NULL)
        return;
    dev_comm_free(f->dev);
    hvdd_client_free(f->kv);
    comm_hier_free(&f->hier);
    transport_free(f->net);
    free(f->hdrs);
    free(f->bytes);
    free(f->joined);
    tl_fusion_free(f->tl);
    stall_free(f->stall);
    hvdd_client_free(f->stall_client);
    if (f->sync_made) {
        pthread_cond_destroy(&f->changed);
        pthread_mutex_destroy(&f->mu);
    }
    free(f);
}

/* The first asynchronous call starts the thread and connects its
 * transport: a collective step, as every rank makes its first call in
 * the same place. */
/* The stall check's settings (read here, not in the thread), rank 0's
 * bookkeeping and every rank's client. A request that some rank never
 * queues still fails at the transport's timeout (HOROVOD_GLOO_TIMEOUT_
 * SECONDS), so the warning comes at the warning time or at half that
 * timeout, whichever is sooner; a shutdown time asked for puts the
 * failure after it (the job stops first). */
static int
start_stall_check(fusion *f, coll_comm *c)
{
    stall_settings s;

    stall_settings_read(&s);
    if (!s.on || s.warn_s <= 0 || c->client == NULL)
        return 0;
    if (s.warn_s > f->expire_s / 2)
        s.warn_s = f->expire_s / 2;
    if (s.shutdown_s > 0 && s.shutdown_s + 2 > f->expire_s)
        f->expire_s = s.shutdown_s + 2;
    f->stall_warn_s = s.warn_s;
    snprintf(f->stall_prefix, sizeof(f->stall_prefix), "%s", c->prefix);
    if ((f->stall_client = comm_new_client()) == NULL ||
        (c->rank == 0 && (f->stall = stall_new(&s, c->size)) == NULL))
        return -1;
    return 0;
}

static int
start(coll_comm *c)
{
    fusion *f = calloc(1, sizeof(*f));
    const char *why = "out of memory"; /* NULL: last_error says it */
    int r = COLL_ENOMEM;

    if (f == NULL || pthread_mutex_init(&f->mu, NULL) != 0)
        goto out;
    if (pthread_cond_init(&f->changed, NULL) != 0) {
        pthread_mutex_destroy(&f->mu);
        goto out;
    }
    f->sync_made = 1;
    f->rank = c->rank;
    f->size = c->size;
    f->comm = c;
    /* bounds far beyond any use, so that the conversions below are
     * defined: a minute a cycle, a TiB a fused buffer */
    f->cycle_ms = fmin(env_double("HOROVOD_CYCLE_TIME", 1), 60000);
    f->timeout_s = comm_timeout_ms() / 1000.0;
    f->expire_s = f->timeout_s;
    f->threshold =
        (size_t)fmin(env_double("HOROVOD_FUSION_THRESHOLD", 64 << 20), 0x1p40);
    snprintf(f->dev_key, sizeof(f->dev_key), "%s-fusion", c->prefix);
    if (f->threshold < 1024)
        f->threshold = 1024;
    /* per-cycle scratch, allocated once: the thread cycles every ms */
    f->hdrs = calloc((size_t)f->size * 3, sizeof(*f->hdrs));
    f->bytes = calloc((size_t)f->size, sizeof(*f->bytes));
    f->joined = calloc((size_t)f->size, sizeof(*f->joined));
    f->mark_cycles = c->mark_cycles;
    if (start_stall_check(f, c) != 0)
        goto out;
    if (c->timeline && (f->tl = tl_fusion_new(c->timeline, c->size)) == NULL)
        goto out;
    f->net = comm_transport_new(c, ".async", c->rank, c->size,
                                c->local_size == c->size);
    if (f->hdrs == NULL || f->bytes == NULL || f->joined == NULL ||
        f->net == NULL)
        goto out;
    /* now, as coll_init does (a dead rank shows at once) */
    why = NULL;
    if ((r = f->net->ops->connect(f->net, "async", c->last_error,
                                  sizeof(c->last_error))) != 0)
        goto out;
    if (pthread_create(&f->thread, NULL, fusion_main, f) != 0) {
        why = "cannot start the fusion thread";
        r = COLL_ENOMEM;
        goto out;
    }
    f->started = 1;
    c->fusion = f;
    f = NULL;
    r = 0;
out:
    if (r != 0 && why)
        comm_fail(c, r, "%s", why);
    fusion_free(f);
    return r;
}

void
comm_fusion_stop(coll_comm *c)
{
    fusion *f = c->fusion;

    if (f == NULL)
        return;
    /* the thread leaves once every rank has asked it to */
    pthread_mutex_lock(&f->mu);
    f->stopping = 1;
    pthread_mutex_unlock(&f->mu);
    pthread_join(f->thread, NULL);
    fusion_free(f);
    c->fusion = NULL;
}

int
fusion_enqueue(coll_comm *c, coll_request *q)
{
    int r = 0;

    if (c->fusion == NULL && (r = start(c)) != 0) {
        free(q);
        return r;
    }
    pthread_mutex_lock(&c->fusion->mu);
    for (coll_request *p = c->fusion->pending; p; p = p->next)
        if (p->id == q->id)
            r = COLL_EINVAL;
    if (r == 0 && !c->fusion->dead) {
        q->queued_at = hvd_mono_now();
        q->next = c->fusion->pending;
        c->fusion->pending = q;
    }
    if (c->fusion->dead)
        r = COLL_EDEAD;
    pthread_mutex_unlock(&c->fusion->mu);
    if (r != 0) {
        r = comm_fail(c, r,
                      r == COLL_EDEAD ? "the fusion thread failed: %s"
                                      : "a request named '%s' is pending",
                      r == COLL_EDEAD ? c->fusion->error : q->name);
        free(q);
    }
    return r;
}

int
fusion_join(coll_comm *c, int *last)
{
    fusion *f;
    int r = 0;

    if (c->fusion == NULL && (r = start(c)) != 0)
        return r;
    f = c->fusion;
    pthread_mutex_lock(&f->mu);
    f->joining = 1;
    while (!f->join_done && !f->dead)
        pthread_cond_wait(&f->changed, &f->mu);
    if (f->join_done) {
        *last = f->join_last;
        f->join_done = 0;
    } else {
        r = COLL_EDEAD;
    }
    pthread_mutex_unlock(&f->mu);
    return r ? comm_fail(c, r, "join: the fusion thread failed: %s", f->error)
             : 0;
}
