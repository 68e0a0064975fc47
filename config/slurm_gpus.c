/* Each node's GPUs of a Slurm job, from `scontrol show job -d ID`: its
 * detail lines ("Nodes=h[1-2] CPU_IDs=0-1 Mem=0 GRES=gpu:2(IDX:0-1)")
 * name nodes in Slurm's hostlist syntax (range.c) and what generic
 * resources each holds ("gpu[:TYPE]:COUNT(IDX:...)", several kinds
 * comma-separated, the IDX lists with commas of their own). */
#include "slurm_alloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hvd_numbers.h"
#include "internal.h"

/* The value of "KEY=" among line's space-separated fields, copied into
 * out; 0, or -1 when line has no such field. */
static int
field(const char *line, const char *key, char *out, size_t n)
{
    size_t k = strlen(key), len;

    for (const char *p = line; (p = strstr(p, key)) != NULL; p += k) {
        if (p != line && p[-1] != ' ')
            continue;
        p += k;
        len = strcspn(p, " \n");
        if (len >= n)
            return -1;
        memcpy(out, p, len);
        out[len] = '\0';
        return 0;
    }
    return -1;
}

/* The GPUs in a GRES value: the count of its "gpu" entries (untyped or
 * typed); 0 without one, -1 when one is malformed. */
static long
gpus_in(const char *gres)
{
    long total = 0, count;

    for (const char *p = gres; *p;) {
        size_t len = 0;
        int depth = 0;
        while (p[len] && (depth || p[len] != ',')) {
            depth += p[len] == '(' ? 1 : p[len] == ')' ? -1 : 0;
            len++;
        }
        if (len > 4 && strncmp(p, "gpu:", 4) == 0) {
            char item[128];
            size_t end = strcspn(p, "(,");
            if (end >= sizeof(item))
                return -1;
            memcpy(item, p, end);
            item[end] = '\0';
            /* the count is the last ':' field: gpu:2, gpu:a100:2 */
            if (hvd_parse_long(strrchr(item, ':') + 1, 0, 1L << 20, &count))
                return -1;
            total += count;
        }
        p += len + (p[len] == ',');
    }
    return total;
}

int
cfg_slurm_node_gpus(const char *detail, char *const *nodes, size_t n,
                    long *gpus, cfg_err *e)
{
    char *copy = strdup(detail), *save = NULL, names[4096], gres[1024];
    cfg_host tmpl = {.slots = 1};
    int r = 0;

    if (copy == NULL)
        return cfg_fail(e, CFG_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++)
        gpus[i] = 0;
    for (char *line = strtok_r(copy, "\n", &save); r == 0 && line;
         line = strtok_r(NULL, "\n", &save)) {
        cfg_hostlist these;
        long count;
        while (*line == ' ')
            line++;
        if (strncmp(line, "Nodes=", 6) != 0 ||
            field(line, "GRES=", gres, sizeof(gres)) != 0)
            continue;
        if (field(line, "Nodes=", names, sizeof(names)) != 0 ||
            (count = gpus_in(gres)) < 0) {
            r = cfg_fail(e, CFG_EINVAL, "scontrol: unreadable line '%.200s'",
                         line);
            break;
        }
        cfg_hostlist_init(&these);
        r = cfg_range_expand(names, &tmpl, "scontrol's Nodes=", &these, e);
        for (size_t k = 0; r == 0 && k < these.count; k++)
            for (size_t i = 0; i < n; i++)
                if (strcmp(these.hosts[k].name, nodes[i]) == 0)
                    gpus[i] = count;
        cfg_hostlist_release(&these);
    }
    free(copy);
    return r;
}
