#include "stall.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "id_index.h"
#include "utf8.h"

typedef struct pending {
    int64_t id;
    double first;        /* when the first rank had it */
    unsigned char *have; /* per rank, this cycle */
    int seen;            /* some rank still has it this cycle */
    int reported;        /* in a warning already */
} pending;

struct stall_check {
    stall_settings s;
    int size;
    pending *p;
    size_t n, cap;
    id_index index; /* id -> position in p */
    double last;    /* the last warning */
};

static double
env_seconds(const char *name, double dflt)
{
    const char *v = getenv(name);
    char *end;
    double d = v && *v ? strtod(v, &end) : dflt;

    return v && *v && (*end || d < 0) ? dflt : d;
}

void
stall_settings_read(stall_settings *s)
{
    const char *off = getenv("HOROVOD_STALL_CHECK_DISABLE");

    s->on = !(off && strcmp(off, "1") == 0);
    s->warn_s = env_seconds("HOROVOD_STALL_CHECK_TIME_SECONDS", 60);
    s->shutdown_s = env_seconds("HOROVOD_STALL_SHUTDOWN_TIME_SECONDS", 0);
    if (s->shutdown_s > 0 && s->shutdown_s < s->warn_s)
        s->shutdown_s = 0; /* (Horovod: "will not shutdown") */
}

stall_check *
stall_new(const stall_settings *s, int size)
{
    stall_check *sc = s->on && s->warn_s > 0 ? calloc(1, sizeof(*sc)) : NULL;

    if (sc) {
        sc->s = *s;
        sc->size = size;
    }
    return sc;
}

void
stall_free(stall_check *sc)
{
    if (sc == NULL)
        return;
    for (size_t i = 0; i < sc->n; i++)
        free(sc->p[i].have);
    free(sc->p);
    id_index_release(&sc->index);
    free(sc);
}

/* Positions changed: the index again. */
static void
reindex(stall_check *sc)
{
    id_index_clear(&sc->index);
    for (size_t i = 0; i < sc->n; i++)
        id_index_put(&sc->index, sc->p[i].id, i, sc->n);
}

void
stall_forget(stall_check *sc, int64_t id)
{
    long i = sc ? id_index_find(&sc->index, id) : -1;

    if (i < 0)
        return;
    free(sc->p[i].have);
    sc->p[i] = sc->p[--sc->n];
    reindex(sc);
}

void
stall_cycle_begin(stall_check *sc)
{
    size_t k = 0;

    if (sc == NULL)
        return;
    /* ids nobody has any more ran (or failed): forgotten */
    for (size_t i = 0; i < sc->n; i++) {
        if (!sc->p[i].seen) {
            free(sc->p[i].have);
            continue;
        }
        sc->p[k] = sc->p[i];
        sc->p[k].seen = 0;
        memset(sc->p[k].have, 0, (size_t)sc->size);
        k++;
    }
    if (k != sc->n) {
        sc->n = k;
        reindex(sc);
    }
}

void
stall_seen(stall_check *sc, int64_t id, int rank, double now)
{
    pending *e = NULL;
    long at;

    if (sc == NULL || rank < 0 || rank >= sc->size)
        return;
    if ((at = id_index_find(&sc->index, id)) >= 0)
        e = &sc->p[at];
    if (e == NULL) {
        if (sc->n == sc->cap) {
            size_t cap = sc->cap ? sc->cap * 2 : 64;
            pending *grown = realloc(sc->p, cap * sizeof(*grown));
            if (grown == NULL)
                return;
            sc->p = grown;
            sc->cap = cap;
        }
        e = &sc->p[sc->n];
        *e = (pending){.id = id, .first = now};
        if ((e->have = calloc((size_t)sc->size, 1)) == NULL)
            return;
        id_index_put(&sc->index, id, sc->n, sc->n);
        sc->n++;
    }
    e->have[rank] = 1;
    e->seen = 1;
}

static int
by_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Rank k's line: "k: [a, b, ...]" (sorted, at most 6 names); '!' when
 * it is stalled past the shutdown time. 1 when k misses something. */
static int
rank_line(stall_check *sc, int k, double now, stall_name_fn name_of, void *arg,
          const char **names, char *out, size_t size, int *late)
{
    char ids[8][40];
    int m = 0, total = 0, past = 0;
    size_t at;

    for (size_t i = 0; i < sc->n; i++) {
        const pending *e = &sc->p[i];
        const char *name;
        if (e->have[k] || now - e->first <= sc->s.warn_s)
            continue;
        past |= sc->s.shutdown_s > 0 && now - e->first > sc->s.shutdown_s;
        if ((name = name_of(arg, e->id)) == NULL && m < 8) {
            snprintf(ids[m % 8], sizeof(ids[0]), "(id %016llx)",
                     (unsigned long long)e->id);
            name = ids[m % 8];
        }
        if (name && m < 64)
            names[m++] = name;
        total++;
    }
    if (total == 0)
        return 0;
    qsort(names, (size_t)m, sizeof(*names), by_name);
    at = (size_t)snprintf(out, size, "\n%d%s: [", k, past ? "!" : "");
    for (int i = 0; i < m && i < 6 && at < size; i++)
        at += (size_t)snprintf(out + at, size - at, "%s%s", i ? ", " : "",
                               names[i]);
    if (at < size)
        snprintf(out + at, size - at, "%s]", total > 6 ? " ..." : "");
    *late |= past;
    return 1;
}

/* Bytes that are not UTF-8 (a name's, or a sequence cut at the end)
 * become '?': the warning travels as JSON. */
static void
utf8_clean(char *s)
{
    while (*s) {
        int n = utf8_seq_len((const unsigned char *)s);
        if (n == 0)
            *s++ = '?';
        else
            s += n;
    }
}

/* Whether a warning is due, checked at every cycle: a stalled name not in
 * a warning yet, one past the shutdown time, or a warning time since the
 * last warning while something is still stalled. */
static int
due(stall_check *sc, double now)
{
    int any = 0, fresh = 0, late = 0;

    for (size_t i = 0; i < sc->n; i++) {
        const pending *e = &sc->p[i];
        int missing = 0;
        for (int k = 0; k < sc->size && !missing; k++)
            missing = !e->have[k];
        if (!missing || now - e->first <= sc->s.warn_s)
            continue;
        any = 1;
        fresh |= !e->reported;
        late |= sc->s.shutdown_s > 0 && now - e->first > sc->s.shutdown_s;
    }
    return late || fresh || (any && now - sc->last >= sc->s.warn_s);
}

int
stall_report(stall_check *sc, double now, stall_name_fn name_of, void *arg,
             char *text, size_t size, int *shutdown, char *reason, size_t rsize)
{
    const char *names[64];
    char line[1200], late_ranks[200] = "";
    size_t at, lat = 0;
    int any = 0;

    *shutdown = 0;
    if (sc == NULL || !due(sc, now))
        return 0;
    sc->last = now;
    for (size_t i = 0; i < sc->n; i++)
        sc->p[i].reported |= now - sc->p[i].first > sc->s.warn_s;
    at = (size_t)snprintf(
        text, size,
        "One or more tensors were submitted to be reduced, gathered or "
        "broadcasted by subset of ranks and are waiting for remainder of "
        "ranks for more than %.0f seconds. This may indicate that different "
        "ranks are trying to submit different tensors or that only subset "
        "of ranks is submitting tensors, which will cause deadlock. \n"
        "Missing ranks:",
        sc->s.warn_s);
    for (int k = 0; k < sc->size; k++) {
        int late = 0;
        if (!rank_line(sc, k, now, name_of, arg, names, line, sizeof(line),
                       &late))
            continue;
        any = 1;
        if (at < size)
            at += (size_t)snprintf(text + at, size - at, "%s", line);
        if (late && lat < sizeof(late_ranks))
            lat += (size_t)snprintf(late_ranks + lat, sizeof(late_ranks) - lat,
                                    "%s%d", lat ? ", " : "", k);
        *shutdown |= late;
    }
    if (*shutdown && at < size)
        snprintf(text + at, size - at,
                 "\nOne or more rank (marked by \"!\") is stalled for longer "
                 "than %.0f seconds. Will shutdown.",
                 sc->s.shutdown_s);
    utf8_clean(text);
    if (*shutdown)
        snprintf(reason, rsize,
                 "stall check: rank%s %s did not queue what the other ranks "
                 "did for more than %.0f s "
                 "(HOROVOD_STALL_SHUTDOWN_TIME_SECONDS)",
                 strchr(late_ranks, ',') ? "s" : "", late_ranks,
                 sc->s.shutdown_s);
    return any;
}
