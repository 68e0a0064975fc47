/* Each node's generic resources of a Slurm job (its GPUs, and the other
 * kinds a step must name to keep them), from `scontrol show job -d ID`. Only
 * the job's own record counts (an array's or a heterogeneous job's id
 * prints the records of all its parts, "JobId=..." first in each). Its
 * detail lines ("Nodes=h[1-2] CPU_IDs=0-1 Mem=0 GRES=gpu:2(IDX:0-1)")
 * name nodes in Slurm's hostlist syntax (range.c) and what generic
 * resources each holds, several kinds comma-separated, in the forms
 * Slurm's versions print: gpu:2(IDX:0-1), gpu:a100:2(IDX:0,2),
 * gpu(CNT:2), gpu:a100(IDX:0-1), gpu(IDX:0-7); older ones say GRES_IDX=
 * where newer ones say GRES=. */
#include "slurm_alloc.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hvd_numbers.h"
#include "internal.h"

/* The value of the space-separated field "KEY=" in line (not copied: it
 * ends at the next space), or NULL. */
static char *
field(char *line, const char *key, size_t *len)
{
    size_t k = strlen(key);

    for (char *p = line; (p = strstr(p, key)) != NULL; p += k)
        if (p == line || p[-1] == ' ') {
            *len = strcspn(p + k, " ");
            return p + k;
        }
    return NULL;
}

/* Items of an index list "0,2-3": 3; -1 when malformed. */
static long
index_count(const char *s, size_t len)
{
    long total = 0, a, b;
    char item[48];

    for (size_t at = 0; at < len;) {
        size_t n = strcspn(s + at, ",)");
        char *dash;
        if (n == 0 || n >= sizeof(item) || at + n > len)
            return -1;
        memcpy(item, s + at, n);
        item[n] = '\0';
        if ((dash = strchr(item, '-')) != NULL)
            *dash = '\0';
        if (hvd_parse_long(item, 0, 1L << 20, &a) != 0 ||
            (dash && hvd_parse_long(dash + 1, a, 1L << 20, &b) != 0))
            return -1;
        total += dash ? b - a + 1 : 1;
        at += n + 1;
    }
    return total;
}

/* A gres entry's count ("nic:2(IDX:0-1)", "gpu:a100(IDX:0,2)": 2) and the
 * length of its kind's name ("nic", "gpu"; a type after it is left out:
 * a step that asks for the kind untyped gets what the job holds, and
 * nodes whose types differ ask alike); -1 when malformed. *counted says
 * whether Slurm printed a count (N, CNT) rather than indices alone. */
static long
entry_count(const char *e, size_t len, size_t *name_len, int *counted)
{
    const char *paren = memchr(e, '(', len), *colon;
    const char *cnt = memmem(e, len, "(CNT:", 5);
    const char *idx = memmem(e, len, "(IDX:", 5);
    size_t head = paren ? (size_t)(paren - e) : len;
    char num[24];
    long n;

    colon = memchr(e, ':', head);
    *name_len = colon ? (size_t)(colon - e) : head;
    *counted = 1;
    if (*name_len == 0)
        return -1;
    if (cnt) {
        const char *end = memchr(cnt + 5, ')', (size_t)(e + len - cnt - 5));
        size_t d = end ? (size_t)(end - cnt - 5) : 0;
        if (d == 0 || d >= sizeof(num))
            return -1;
        memcpy(num, cnt + 5, d);
        num[d] = '\0';
        return hvd_parse_long(num, 0, LONG_MAX, &n) == 0 ? n : -1;
    }
    /* name[:type]:N: the last field, where it is a number */
    colon = memrchr(e, ':', head);
    if (colon && (size_t)(e + head - colon - 1) < sizeof(num)) {
        memcpy(num, colon + 1, (size_t)(e + head - colon - 1));
        num[e + head - colon - 1] = '\0';
        if (hvd_parse_long(num, 0, LONG_MAX, &n) == 0)
            return n;
    }
    *counted = 0;
    if (idx)
        return index_count(idx + 5, (size_t)(e + len - idx - 5));
    return -1;
}

/* The other kinds of one node while they are read: each name's count. */
typedef struct kind {
    char name[64];
    long count;
} kind;
#define KINDS_MAX 16

static int
by_name(const void *a, const void *b)
{
    return strcmp(((const kind *)a)->name, ((const kind *)b)->name);
}

/* Adds n of the kind named name (len bytes) to kinds; NULL, or why not. */
static const char *
add_kind(kind *kinds, int *nk, const char *name, size_t len, long n)
{
    int i = 0;

    if (len >= sizeof(kinds[0].name))
        return "a generic resource's name is too long";
    while (i < *nk && (strlen(kinds[i].name) != len ||
                       strncmp(kinds[i].name, name, len) != 0))
        i++;
    if (i == *nk) {
        if (*nk == KINDS_MAX)
            return "more kinds of generic resources than a step can name";
        memcpy(kinds[i].name, name, len);
        kinds[i].name[len] = '\0';
        kinds[(*nk)++].count = 0;
    }
    if (kinds[i].count > LONG_MAX - n)
        return "a generic resource's count is too large";
    kinds[i].count += n;
    return NULL;
}

/* A GRES value into g: its GPUs, and its other kinds as srun's --gres
 * takes them, in the order of their names (so that nodes that print
 * them in another order compare alike); NULL, or why it cannot be read. */
static const char *
gres_in(const char *gres, size_t len, cfg_node_gres *g)
{
    kind kinds[KINDS_MAX];
    size_t used = 0;
    int nk = 0;

    g->gpus = 0;
    g->other[0] = '\0';
    if (len == 6 && strncmp(gres, "(null)", 6) == 0)
        return NULL;
    for (size_t at = 0; at < len;) {
        size_t n_len = 0, name;
        int depth = 0, counted;
        const char *why;
        long n;
        while (at + n_len < len && (depth || gres[at + n_len] != ',')) {
            depth += gres[at + n_len] == '('   ? 1
                     : gres[at + n_len] == ')' ? -1
                                               : 0;
            n_len++;
        }
        if ((n = entry_count(gres + at, n_len, &name, &counted)) < 0)
            return "unreadable GRES";
        if (name == 3 && strncmp(gres + at, "gpu", 3) == 0) {
            if (g->gpus > LONG_MAX - n)
                return "a generic resource's count is too large";
            g->gpus += n;
        } else if (!counted &&
                   ((name == 3 && !strncmp(gres + at, "mps", 3)) ||
                    (name == 5 && !strncmp(gres + at, "shard", 5)))) {
            /* (their indices are GPUs', not how many of them) */
            return "no count of a GPU's shares in GRES";
        } else if (n > 0 && (why = add_kind(kinds, &nk, gres + at, name, n))) {
            return why;
        }
        at += n_len + 1;
    }
    qsort(kinds, (size_t)nk, sizeof(kinds[0]), by_name);
    for (int i = 0; i < nk; i++) {
        int w = snprintf(g->other + used, sizeof(g->other) - used, "%s%s:%ld",
                         used ? "," : "", kinds[i].name, kinds[i].count);
        if (w < 0 || (size_t)w >= sizeof(g->other) - used)
            return "more generic resources than a step can name";
        used += (size_t)w;
    }
    return NULL;
}

/* One detail line: sets out[i] of each node it names; a node no line
 * names is left with gpus -1. */
static int
detail_line(char *line, char *const *nodes, size_t n, cfg_node_gres *out,
            cfg_err *e)
{
    size_t nlen = 0, glen = 0;
    char *names = field(line, "Nodes=", &nlen), *gres;
    cfg_host tmpl = {.slots = 1};
    cfg_hostlist these;
    cfg_node_gres g = {0, ""};
    const char *why;
    int r;

    if (((gres = field(line, "GRES=", &glen)) != NULL ||
         (gres = field(line, "GRES_IDX=", &glen)) != NULL) &&
        (why = gres_in(gres, glen, &g)) != NULL)
        return cfg_fail(e, CFG_EINVAL, "scontrol: %s in '%.200s'", why, line);
    names[nlen] = '\0';
    cfg_hostlist_init(&these);
    r = cfg_range_expand(names, &tmpl, "scontrol's Nodes=", &these, e);
    for (size_t k = 0; r == 0 && k < these.count; k++)
        for (size_t i = 0; i < n; i++)
            if (strcmp(these.hosts[k].name, nodes[i]) == 0)
                out[i] = g;
    cfg_hostlist_release(&these);
    return r;
}

int
cfg_slurm_node_gres(const char *detail, const char *job, char *const *nodes,
                    size_t n, cfg_node_gres *out, cfg_err *e)
{
    char *copy = strdup(detail), *save = NULL;
    size_t jlen = strlen(job);
    int r = 0, ours = 0;

    if (copy == NULL)
        return cfg_fail(e, CFG_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++)
        out[i].gpus = -1;
    for (char *line = strtok_r(copy, "\n", &save); r == 0 && line;
         line = strtok_r(NULL, "\n", &save)) {
        while (*line == ' ')
            line++;
        if (strncmp(line, "JobId=", 6) == 0)
            ours = strncmp(line + 6, job, jlen) == 0 && line[6 + jlen] == ' ';
        else if (ours && strncmp(line, "Nodes=", 6) == 0)
            r = detail_line(line, nodes, n, out, e);
    }
    free(copy);
    for (size_t i = 0; r == 0 && i < n; i++)
        if (out[i].gpus < 0)
            r = cfg_fail(e, CFG_EINVAL,
                         "scontrol show job -d %s names no node '%s'", job,
                         nodes[i]);
    return r;
}
