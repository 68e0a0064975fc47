/* Elastic jobs (--min-np, --max-np): when a rank fails, its host leaves
 * the job (its agent stops its other workers) and, while --min-np ranks
 * are left, the others go on in hvdd's next round (POST /v1/round: the
 * hosts that go on in their order, so that rank 0 stays with the oldest
 * host, each cut to the workers that registered, every one of them
 * kept). The workers find the round themselves: their collective with
 * the dead rank fails and coll_reset rejoins. Fewer than --min-np: the
 * job waits --elastic-timeout, then fails with the last failure's code. */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "fleet_state.h"
#include "hvd_clock.h"
#include "hvd_exit.h"

int
fleet_elastic_init(fleet *j)
{
    fleet_elastic *e = &j->el;

    e->on = settings_elastic(j->s);
    if (!e->on)
        return 0;
    e->min_np = cfg_values_long(&j->s->values, CFG_OPT_MIN_NP, j->s->plan.size);
    e->max_np = cfg_values_long(&j->s->values, CFG_OPT_MAX_NP, 0);
    e->reset_limit = cfg_values_long(&j->s->values, CFG_OPT_RESET_LIMIT, -1);
    e->timeout = cfg_values_double(&j->s->values, CFG_OPT_ELASTIC_TIMEOUT, 600);
    for (int r = 0; r < j->s->plan.size; r++)
        j->h[j->s->plan.slots[r].host].ranks++;
    return fleet_hosts_init(j);
}

void
fleet_elastic_release(fleet *j)
{
    fleet_hosts_release(j);
}

void
fleet_list_add(char *list, size_t size, size_t *at, const char *name, int n)
{
    if (*at >= size)
        return; /* (full: the caller's buffer said so already) */
    if (n >= 0)
        *at += (size_t)snprintf(list + *at, size - *at, "%s%s:%d",
                                *at ? "," : "", name, n);
    else
        *at += (size_t)snprintf(list + *at, size - *at, "%s%s", *at ? "," : "",
                                name);
}

int
fleet_elastic_remaining(const fleet *j, char *spec, size_t size, char *names,
                        size_t nsize)
{
    size_t at = 0, nat = 0;
    int total = 0;

    spec[0] = names[0] = '\0';
    for (int i = 0; i < j->n; i++) {
        const host_run *h = &j->h[i];
        int n = h->ranks;
        if (h->out || h->over || n == 0)
            continue;
        if (j->el.max_np > 0 && total + n > j->el.max_np)
            n = (int)j->el.max_np - total;
        if (n <= 0)
            break;
        total += n;
        fleet_list_add(spec, size, &at, h->name, n);
        fleet_list_add(names, nsize, &nat, h->name, -1);
    }
    return total;
}

static void
give_up(fleet *j, const char *why)
{
    fprintf(stderr, "hvdrun: %s\n", why);
    j->el.gave_up_code = fleet_elastic_code(j);
    fleet_stop_all(j, why);
}

int
fleet_elastic_code(const fleet *j)
{
    return j->el.first_code ? j->el.first_code : HVD_EXIT_LAUNCH;
}

void
fleet_elastic_took_round(fleet *j, json_t *ranks)
{
    size_t k;
    json_t *v;
    char line[64];

    for (int i = 0; i < j->n; i++)
        j->h[i].ranks = 0;
    json_array_foreach(ranks, k, v)
    {
        const char *host = json_string_value(json_object_get(v, "host"));
        json_int_t pid = json_integer_value(json_object_get(v, "pid"));
        for (int i = 0; host && i < j->n; i++)
            if (strcmp(j->h[i].name, host) == 0) {
                j->h[i].ranks++;
                if (pid <= 0)
                    continue; /* a new worker's rank */
                /* so that its worker's output is tagged with it */
                snprintf(line, sizeof(line), "rank %lld %zu\n", (long long)pid,
                         k);
                fleet_tell(&j->h[i], line);
            }
    }
}

/* "a:2,x:2" from hvdd's ranks (hosts in rank order): the round's hosts. */
static void
round_spec(json_t *ranks, char *spec, size_t size)
{
    const char *last = NULL;
    size_t at = 0, k;
    int count = 0;
    json_t *v;

    spec[0] = '\0';
    json_array_foreach(ranks, k, v)
    {
        const char *host = json_string_value(json_object_get(v, "host"));
        if (host == NULL)
            continue;
        if (last && strcmp(last, host) != 0)
            fleet_list_add(spec, size, &at, last, count);
        count = last && strcmp(last, host) == 0 ? count + 1 : 1;
        last = host;
    }
    if (last)
        fleet_list_add(spec, size, &at, last, count);
}

/* hvdd's next round, if at least --min-np workers go on (and the new
 * workers of hosts in add, "x:2" or NULL); returns its size, 0 when too
 * few go on (*workers: how many), -1 (said why). Its number into
 * *round. */
int
fleet_elastic_round(fleet *j, const char *spec, const char *add, int *workers,
                    int *round, char *hosts, size_t hsize)
{
    json_t *answer = NULL;
    json_t *body = json_pack("{ss ss sb sI ss}", "hosts", spec, "keep",
                             "registered", "trim", 1, "min",
                             (json_int_t)j->el.min_np, "add", add ? add : "");
    char err[512], why[700];
    int r = hvdd_chan_post(j->spec->chan, "round", body, 10000, &answer, err,
                           sizeof(err)),
        size;

    if (r != 0) {
        snprintf(why, sizeof(why), "cannot start the next round in hvdd: %s",
                 err);
        give_up(j, why);
        return -1;
    }
    size = json_is_true(json_object_get(answer, "started"))
               ? (int)json_integer_value(json_object_get(answer, "size"))
               : 0;
    if (size > 0) {
        fleet_elastic_took_round(j, json_object_get(answer, "ranks"));
        j->el.short_since = 0;
        if (hosts)
            round_spec(json_object_get(answer, "ranks"), hosts, hsize);
    }
    *workers = (int)json_integer_value(json_object_get(answer, "workers"));
    *round = (int)json_integer_value(json_object_get(answer, "round"));
    json_decref(answer);
    return size;
}

/* Fewer than --min-np: the job waits (the timer is fleet_elastic_check). */
static void
wait_for_ranks(fleet *j, const char *host, const char *failure, int left,
               const char *names)
{
    if (j->el.short_since == 0)
        j->el.short_since = hvd_mono_now();
    fprintf(stderr,
            "hvdrun: host %s failed (%s); %d ranks left on %s, fewer than "
            "--min-np %ld: waiting up to %g s (--elastic-timeout)\n",
            host, failure, left, names, j->el.min_np, j->el.timeout);
}

void
fleet_elastic_host_failed(fleet *j, host_run *h, int rank, int code)
{
    fleet_elastic *e = &j->el;
    char spec[4096], names[4096], why[700], failure[160];
    int left, size, workers = 0, round;

    if (h->out || j->stopping)
        return;
    h->out = 1;
    fleet_hosts_blacklist(j, h);
    /* its agent gets the kill grace to stop its workers, then is dropped */
    h->out_deadline = fleet_stop_deadline(j);
    if (e->first_code == 0)
        e->first_code = code;
    fleet_tell(h, "abort a rank of this host failed\n");
    if (rank >= 0)
        snprintf(failure, sizeof(failure), "rank %d exit %d", rank, code);
    else
        snprintf(failure, sizeof(failure), "its agent exit %d", code);
    left = fleet_elastic_remaining(j, spec, sizeof(spec), names, sizeof(names));
    if (left == 0) {
        snprintf(why, sizeof(why), "host %.200s failed (%s); no host is left",
                 h->name, failure);
        give_up(j, why);
        return;
    }
    if (e->reset_limit >= 0 && ++e->resets > e->reset_limit) {
        snprintf(why, sizeof(why),
                 "host %.200s failed (%s): --reset-limit %ld reached", h->name,
                 failure, e->reset_limit);
        give_up(j, why);
        return;
    }
    if (left < e->min_np) {
        wait_for_ranks(j, h->name, failure, left, names);
        return;
    }
    if ((size = fleet_elastic_round(j, spec, NULL, &workers, &round, NULL, 0)) <
        0)
        return;
    if (size == 0) { /* fewer of them run than their slots */
        wait_for_ranks(j, h->name, failure, workers, names);
        return;
    }
    fprintf(stderr,
            "hvdrun: host %s failed (%s); continuing with %d ranks on %s\n",
            h->name, failure, size, names);
}

void
fleet_elastic_check(fleet *j)
{
    fleet_elastic *e = &j->el;
    char spec[4096], names[4096], why[700];

    if (!e->on || e->short_since == 0 || j->stopping ||
        hvd_mono_now() - e->short_since < e->timeout)
        return;
    fleet_elastic_remaining(j, spec, sizeof(spec), names, sizeof(names));
    snprintf(why, sizeof(why),
             "fewer than --min-np %ld ranks for %g s (--elastic-timeout): "
             "only %.400s left",
             e->min_np, e->timeout, names[0] ? names : "no host");
    give_up(j, why);
}
