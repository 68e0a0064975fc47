#include "summary.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hvdd_chan.h"

#define MAX_CODES 16

typedef struct group {
    const char *label; /* "exit", "lost (no heartbeat)", "no report" */
    int code;
    int n;
    const char *first_host; /* of the first rank */
    char ranks[200];        /* "3" or "0,1,2" */
} group;

static group *
group_for(group *g, int *ng, const char *label, int code)
{
    for (int i = 0; i < *ng; i++)
        if (strcmp(g[i].label, label) == 0 && g[i].code == code)
            return &g[i];
    if (*ng == MAX_CODES)
        return NULL;
    g[*ng] = (group){label, code, 0, NULL, ""};
    return &g[(*ng)++];
}

static void
add_rank(group *g, int rank, const char *host)
{
    size_t len = strlen(g->ranks);

    if (g->n++ == 0)
        g->first_host = host;
    if (len + 16 < sizeof(g->ranks))
        snprintf(g->ranks + len, sizeof(g->ranks) - len, "%s%d", len ? "," : "",
                 rank);
    else if (g->ranks[len - 1] != '.')
        snprintf(g->ranks + len, sizeof(g->ranks) - len, ",...");
}

static void
print_groups(const group *g, int ng, size_t nranks)
{
    fprintf(stderr, "hvdrun: hvdd's view: %zu ranks", nranks);
    for (int i = 0; i < ng; i++) {
        if (strcmp(g[i].label, "exit") == 0)
            fprintf(stderr, "; exit %d: ", g[i].code);
        else
            fprintf(stderr, "; %s: ", g[i].label);
        if (g[i].code == 0 && strcmp(g[i].label, "exit") == 0)
            fprintf(stderr, "%d", g[i].n);
        else if (g[i].n == 1)
            fprintf(stderr, "rank %s on %s", g[i].ranks, g[i].first_host);
        else
            fprintf(stderr, "ranks %s", g[i].ranks);
    }
    fputc('\n', stderr);
}

void
hvdrun_summary_print(hvdd_chan *ch)
{
    hvdd_chan_answer a = {0};
    json_t *st = NULL, *r;
    group g[MAX_CODES];
    int ng = 0;
    size_t i;

    if (hvdd_chan_call(ch, "GET", "/v1/status", 0, NULL, 0, 10000, &a) == 0 &&
        a.status == 200)
        st = json_loadb(a.body, a.len, 0, NULL);
    json_array_foreach(json_object_get(st, "ranks"), i, r)
    {
        const char *state = json_string_value(json_object_get(r, "state"));
        const char *host = json_string_value(json_object_get(r, "host"));
        int code = (int)json_integer_value(json_object_get(r, "exit_code"));
        group *grp = state && strcmp(state, "exited") == 0
                         ? group_for(g, &ng, "exit", code)
                     : state && strcmp(state, "lost") == 0
                         ? group_for(g, &ng, "lost (no heartbeat)", 0)
                         : group_for(g, &ng, "no report", 0);
        if (grp)
            add_rank(grp, (int)json_integer_value(json_object_get(r, "rank")),
                     host ? host : "?");
    }
    if (ng > 0)
        print_groups(g, ng, json_array_size(json_object_get(st, "ranks")));
    json_decref(st);
    free(a.body);
}
