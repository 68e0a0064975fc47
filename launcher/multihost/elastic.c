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
    const char *addr = j->spec->rendezvous_addr;

    e->on = settings_elastic(j->s);
    if (!e->on)
        return 0;
    e->min_np = cfg_values_long(&j->s->values, CFG_OPT_MIN_NP, j->s->plan.size);
    e->max_np = cfg_values_long(&j->s->values, CFG_OPT_MAX_NP, 0);
    e->reset_limit = cfg_values_long(&j->s->values, CFG_OPT_RESET_LIMIT, -1);
    e->timeout = cfg_values_double(&j->s->values, CFG_OPT_ELASTIC_TIMEOUT, 600);
    for (int r = 0; r < j->s->plan.size; r++)
        j->h[j->s->plan.slots[r].host].ranks++;
    if (addr == NULL || strcmp(addr, "0.0.0.0") == 0 || strcmp(addr, "::") == 0)
        addr = "127.0.0.1"; /* hvdd listens on every address */
    e->hvdd =
        hvdd_client_new(addr, j->spec->rendezvous_port, j->spec->token, 5.0);
    return e->hvdd ? 0 : -1;
}

void
fleet_elastic_release(fleet *j)
{
    hvdd_client_free(j->el.hvdd);
    j->el.hvdd = NULL;
}

/* The hosts that go on, "a:2,c:2" in their order, at most max_np ranks;
 * their names "a,c" into names; returns the ranks. */
static int
remaining(const fleet *j, char *spec, size_t size, char *names, size_t nsize)
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
        if (at < size)
            at += (size_t)snprintf(spec + at, size - at, "%s%s:%d",
                                   at ? "," : "", h->name, n);
        if (nat < nsize)
            nat += (size_t)snprintf(names + nat, nsize - nat, "%s%s",
                                    nat ? "," : "", h->name);
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

/* Tells each host's agent the new rank of each of its workers (ranks:
 * hvdd's [{"host", "pid"}] in rank order), so that their output is
 * tagged with it. */
static void
retag_all(fleet *j, json_t *ranks)
{
    size_t k;
    json_t *v;
    char line[64];

    json_array_foreach(ranks, k, v)
    {
        const char *host = json_string_value(json_object_get(v, "host"));
        json_int_t pid = json_integer_value(json_object_get(v, "pid"));
        for (int i = 0; host && pid > 0 && i < j->n; i++)
            if (strcmp(j->h[i].name, host) == 0) {
                snprintf(line, sizeof(line), "rank %lld %zu\n", (long long)pid,
                         k);
                fleet_tell(&j->h[i], line);
            }
    }
}

/* hvdd's next round, if at least --min-np workers go on; returns its
 * size, 0 when too few go on (*workers: how many), -1 (said why). */
static int
start_round(fleet *j, const char *spec, int *workers)
{
    json_t *answer = NULL;
    json_t *body =
        json_pack("{ss ss sb sI}", "hosts", spec, "keep", "registered", "trim",
                  1, "min", (json_int_t)j->el.min_np);
    int r = hvdd_client_post(j->el.hvdd, "round", body, 10000, &answer), size;
    char why[700];

    if (r != 0) {
        snprintf(why, sizeof(why), "cannot start the next round in hvdd: %s",
                 hvdd_client_error(j->el.hvdd));
        give_up(j, why);
        return -1;
    }
    size = json_is_true(json_object_get(answer, "started"))
               ? (int)json_integer_value(json_object_get(answer, "size"))
               : 0;
    if (size > 0)
        retag_all(j, json_object_get(answer, "ranks"));
    *workers = (int)json_integer_value(json_object_get(answer, "workers"));
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
    int left, size, workers = 0;

    if (h->out || j->stopping)
        return;
    h->out = 1;
    /* its agent gets the kill grace to stop its workers, then is dropped */
    h->out_deadline = fleet_stop_deadline(j);
    if (e->first_code == 0)
        e->first_code = code;
    fleet_tell(h, "abort a rank of this host failed\n");
    if (rank >= 0)
        snprintf(failure, sizeof(failure), "rank %d exit %d", rank, code);
    else
        snprintf(failure, sizeof(failure), "its agent exit %d", code);
    left = remaining(j, spec, sizeof(spec), names, sizeof(names));
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
    if ((size = start_round(j, spec, &workers)) < 0)
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
    remaining(j, spec, sizeof(spec), names, sizeof(names));
    snprintf(why, sizeof(why),
             "fewer than --min-np %ld ranks for %g s (--elastic-timeout): "
             "only %.400s left",
             e->min_np, e->timeout, names[0] ? names : "no host");
    give_up(j, why);
}
