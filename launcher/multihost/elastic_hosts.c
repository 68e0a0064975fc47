/* Elastic hosts that come and go while the job runs. A host joins when
 * the discovery script lists it (or, with a fixed -H list, when it is a
 * spare of the plan or back from its cooldown) and there is room below
 * --max-np: its agent starts (hvdd takes the host first: POST /v1/host),
 * chooses its address on the job's network, and once it is ready hvdd's
 * next round gives it new ranks after the running ones ("add"); its
 * agent gets "go ROUND HOSTS" and its workers start in that round. The
 * running workers see the round at their next check (Horovod's
 * check_host_updates at a commit) and reset into it. A host that fails
 * is blacklisted for a cooldown that grows with its failures (Horovod's:
 * MIN x 2^(n-1) plus up to MIN of jitter, within MIN..MAX). A running
 * host that the discovery no longer lists leaves through a round
 * without it: its workers are told they are out and exit 0. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fleet_state.h"
#include "hvd_clock.h"

static void join_ready(fleet *j);

int
fleet_host_index(fleet *j, const char *name, int slots)
{
    cfg_host add = {.name = (char *)name, .slots = slots > 0 ? slots : 1};
    host_run *grown;
    cfg_err e;

    for (int i = 0; i < j->n; i++)
        if (strcmp(j->h[i].name, name) == 0)
            return i;
    /* the fleet's hosts are the first n of the settings' list */
    if (j->s->hosts.count != (size_t)j->n ||
        (grown = realloc(j->h, sizeof(*grown) * ((size_t)j->n + 1))) == NULL)
        return -1;
    j->h = grown;
    if (cfg_hostlist_add(&j->s->hosts, &add, &e) != 0)
        return -1;
    j->h[j->n] = (host_run){.name = j->s->hosts.hosts[j->n].name,
                            .over = 1,
                            .out = 1,
                            .slots = add.slots};
    return j->n++;
}

int
fleet_hosts_init(fleet *j)
{
    fleet_elastic *e = &j->el;
    const char *range =
        cfg_values_get(&j->s->values, CFG_OPT_BLACKLIST_COOLDOWN_RANGE);
    const char *script =
        cfg_values_get(&j->s->values, CFG_OPT_HOST_DISCOVERY_SCRIPT);

    e->cool_min = 10;
    e->cool_max = 300;
    if (range && sscanf(range, "%lf %lf", &e->cool_min, &e->cool_max) != 2)
        return -1;
    /* srun's step has its nodes for good; a job that starts on one host
     * uses loopback, which no other host can join */
    e->growing = j->step == NULL && j->n > 1;
    for (int i = 0; i < j->n; i++) {
        j->h[i].slots = j->s->hosts.hosts[i].slots;
        j->h[i].listed = 1;
    }
    /* the -H hosts the plan left out are spares: they may join later */
    if (e->growing && j->s->hosts.count > (size_t)j->n) {
        host_run *grown = realloc(j->h, sizeof(*grown) * j->s->hosts.count);
        if (grown == NULL)
            return -1;
        j->h = grown;
    }
    for (size_t i = (size_t)j->n; e->growing && i < j->s->hosts.count; i++) {
        /* (with a discovery, its runs say: these may be hosts an
         * earlier start of the job found, --max-restarts) */
        j->h[i] = (host_run){.name = j->s->hosts.hosts[i].name,
                             .over = 1,
                             .out = 1,
                             .slots = j->s->hosts.hosts[i].slots,
                             .listed = script == NULL};
        j->n++;
    }
    if (script && e->growing) {
        e->discovering = 1;
        discovery_init(
            &e->disc, script,
            (int)cfg_values_long(&j->s->values, CFG_OPT_SLOTS_PER_HOST, 1), 1.0,
            DISCOVERY_TIMEOUT);
    }
    return 0;
}

void
fleet_hosts_release(fleet *j)
{
    if (j->el.discovering)
        discovery_release(&j->el.disc);
}

int
fleet_hosts_fd(const fleet *j, int which)
{
    return j->el.discovering ? discovery_fd(&j->el.disc, which) : -1;
}

void
fleet_hosts_blacklist(fleet *j, host_run *h)
{
    fleet_elastic *e = &j->el;
    double lower = e->cool_min, wait;
    int n = ++h->fails;

    if (!e->growing)
        return;
    wait = lower * (double)(1L << (n - 1 < 20 ? n - 1 : 20)) +
           lower * ((double)rand() / RAND_MAX);
    wait = wait < e->cool_min   ? e->cool_min
           : wait > e->cool_max ? e->cool_max
                                : wait;
    if (wait < 1) /* (never a retry at every turn of the loop) */
        wait = 1;
    h->back_at = hvd_mono_now() + wait;
    fprintf(stderr, "hvdrun: host %s blacklisted for %.1f s (failure %d)\n",
            h->name, wait, n);
}

/* The ranks the job may have: --max-np, else no bound. */
static long
rank_bound(const fleet *j)
{
    return j->el.max_np > 0 ? j->el.max_np : 1L << 30;
}

/* In the job: its workers run in this round. */
static int
in_job(const host_run *h)
{
    return !h->out && !h->over && !h->joining && h->ranks > 0;
}

static int
ranks_in_job(const fleet *j)
{
    int n = 0;

    for (int i = 0; i < j->n; i++)
        n += in_job(&j->h[i]) ? j->h[i].ranks : 0;
    return n;
}

/* The job is ending: a host's workers all finished (or it stops). No
 * host joins it any more. */
static int
ending(const fleet *j)
{
    if (j->stopping || j->el.gave_up_code)
        return 1;
    for (int i = 0; i < j->n; i++)
        if (j->h[i].over && !j->h[i].out && j->h[i].code == 0 &&
            j->h[i].started)
            return 1;
    return 0;
}

/* A joiner that will not join: its agent stops (or is dropped after the
 * grace); the link stays until then, as the loop may be reading it. */
static void
drop_joiner(fleet *j, host_run *h, const char *abort_line)
{
    h->joining = 0;
    h->out = 1;
    h->out_deadline = fleet_stop_deadline(j);
    fleet_tell(h, abort_line);
}

void
fleet_hosts_join_failed(fleet *j, host_run *h, const char *why)
{
    if (!h->joining)
        return;
    fprintf(stderr, "hvdrun: host %s could not join: %s\n", h->name, why);
    drop_joiner(j, h, "abort it could not join\n");
    if (h->link == NULL)
        h->over = 1;
    fleet_hosts_blacklist(j, h);
    if (!ending(j)) /* the joiners that waited for it */
        join_ready(j);
}

/* A fresh start for a host that joins: its last run's state goes. */
static void
begin_join(fleet *j, int i)
{
    host_run *h = &j->h[i];
    json_t *answer = NULL;
    char err[512];
    int r;

    hvdrun_link_free(h->link);
    free(h->lines[0].p);
    free(h->lines[1].p);
    *h = (host_run){
        .name = h->name,
        .slots = h->slots,
        .listed = h->listed,
        .fails = h->fails,
        .joining = 1,
        .join_by = hvd_mono_now() +
                   cfg_values_double(&j->s->values, CFG_OPT_START_TIMEOUT, 30)};
    r = hvdd_chan_post(j->spec->chan, "host",
                       json_pack("{ss}", "host", h->name), 5000, &answer, err,
                       sizeof(err));
    json_decref(answer);
    if (r != 0) {
        fleet_hosts_join_failed(j, h, err);
        return;
    }
    if (cfg_values_flag(&j->s->values, CFG_OPT_VERBOSE))
        fprintf(stderr, "hvdrun: %s: starting its agent to join the job\n",
                h->name);
    fleet_start_host(j, i);
}

/* The ready joiners that fit below --max-np, "x:2,y:1", into add, and
 * their names into names; returns their ranks. */
static int
ready_joiners(const fleet *j, int room, char *add, size_t size, char *names,
              size_t nsize)
{
    size_t at = 0, nat = 0;
    int total = 0;

    add[0] = names[0] = '\0';
    for (int i = 0; i < j->n && total < room; i++) {
        const host_run *h = &j->h[i];
        int n = h->slots < room - total ? h->slots : room - total;
        if (!h->joining || !h->ready)
            continue;
        total += n;
        fleet_list_add(add, size, &at, h->name, n);
        fleet_list_add(names, nsize, &nat, h->name, -1);
    }
    return total;
}

/* Ready joiners go into hvdd's next round beside the running workers;
 * each gets "go ROUND HOSTS". Too few for --min-np: they wait. */
static void
join_ready(fleet *j)
{
    /* hosts that arrive together join in one round: a round made while
     * another joiner's workers start would cut their ranks */
    for (int i = 0; i < j->n; i++)
        if (j->h[i].joining && !j->h[i].ready)
            return;
    char spec[4096], names[4096], add[4096], added[4096], hosts[8192];
    char go[8300];
    long room = rank_bound(j);
    int workers = 0, round = 0, size;

    fleet_elastic_remaining(j, spec, sizeof(spec), names, sizeof(names));
    room -= ranks_in_job(j);
    if (room <= 0 || ready_joiners(j, (int)room, add, sizeof(add), added,
                                   sizeof(added)) == 0)
        return;
    size = fleet_elastic_round(j, spec, add, &workers, &round, hosts,
                               sizeof(hosts));
    if (size <= 0)
        return; /* too few even with them (they wait), or gave up */
    snprintf(go, sizeof(go), "go %d %s\n", round, hosts);
    for (int i = 0; i < j->n; i++) {
        host_run *h = &j->h[i];
        if (h->joining && h->ready && h->ranks > 0) {
            h->joining = 0;
            fleet_tell(h, go);
        }
    }
    fprintf(stderr, "hvdrun: %s joined; continuing with %d ranks on %s%s%s\n",
            added, size, names, names[0] ? "," : "", added);
}

void
fleet_hosts_ready(fleet *j, host_run *h)
{
    if (h->joining && !ending(j))
        join_ready(j);
}

/* The discovery no longer lists a running host: a round without it (its
 * workers learn they are out and exit 0). Below --min-np its workers are
 * stopped and the job waits for hosts (never a round whose new workers
 * wait for a sync the others skip: Horovod #3494). */
static void
leave(fleet *j, host_run *h)
{
    char spec[4096], names[4096];
    int left, workers = 0, round, size = 0;

    h->out = 1;
    h->out_deadline = fleet_stop_deadline(j) + 30;
    left = fleet_elastic_remaining(j, spec, sizeof(spec), names, sizeof(names));
    if (left >= j->el.min_np &&
        (size = fleet_elastic_round(j, spec, NULL, &workers, &round, NULL, 0)) <
            0)
        return;
    if (size > 0) {
        fprintf(stderr,
                "hvdrun: host %s is no longer discovered; continuing with %d "
                "ranks on %s\n",
                h->name, size, names);
        return;
    }
    fleet_tell(h, "abort its host is no longer discovered\n");
    if (j->el.short_since == 0)
        j->el.short_since = hvd_mono_now();
    fprintf(stderr,
            "hvdrun: host %s is no longer discovered; %d ranks left%s%s, "
            "fewer than --min-np %ld: waiting up to %g s (--elastic-timeout)\n",
            h->name, left, left ? " on " : "", names, j->el.min_np,
            j->el.timeout);
}

/* The discovery's latest list: hosts it lists may join, running hosts it
 * dropped leave. */
static void
take_news(fleet *j, const cfg_hostlist *found)
{
    for (int i = 0; i < j->n; i++)
        j->h[i].listed = 0;
    for (size_t k = 0; k < found->count; k++) {
        int i =
            fleet_host_index(j, found->hosts[k].name, found->hosts[k].slots);
        if (i >= 0) {
            j->h[i].listed = 1;
            j->h[i].slots = found->hosts[k].slots;
        }
    }
    for (int i = 0; i < j->n && !j->stopping; i++) {
        host_run *h = &j->h[i];
        if (in_job(h) && !h->listed)
            leave(j, h);
        else if (h->joining && !h->listed) /* gone before it joined */
            drop_joiner(j, h, "abort its host is no longer discovered\n");
    }
}

static void
discover(fleet *j, double now)
{
    fleet_elastic *e = &j->el;
    cfg_hostlist found;
    char err[700];
    int r;

    cfg_hostlist_init(&found);
    r = discovery_turn(&e->disc, now, &found, err, sizeof(err));
    if (r < 0 && !e->disc_failing)
        fprintf(stderr,
                "hvdrun: --host-discovery-script: %s; the hosts stay as they "
                "are, trying again every second\n",
                err);
    if (r != 0)
        e->disc_failing = r < 0;
    if (r == 1)
        take_news(j, &found);
    cfg_hostlist_release(&found);
}

/* No host joins a job that ends: the joiners' agents are stopped. */
static void
stop_joiners(fleet *j)
{
    for (int i = 0; i < j->n; i++)
        if (j->h[i].joining)
            drop_joiner(j, &j->h[i], "abort the job is ending\n");
}

void
fleet_hosts_turn(fleet *j)
{
    fleet_elastic *e = &j->el;
    long room = rank_bound(j);
    double now = hvd_mono_now();

    if (!e->on || !e->growing || !j->go_sent)
        return;
    if (ending(j)) {
        stop_joiners(j);
        if (e->discovering) /* its run is not read any more */
            discovery_release(&e->disc);
        e->discovering = 0;
        return;
    }
    if (e->discovering)
        discover(j, now);
    room -= ranks_in_job(j);
    for (int i = 0; i < j->n; i++) {
        host_run *h = &j->h[i];
        if (h->joining && !h->ready && now > h->join_by)
            fleet_hosts_join_failed(j, h,
                                    "its agent was not ready within "
                                    "--start-timeout");
        else if (h->joining)
            room -= h->slots;
    }
    for (int i = 0; i < j->n && room > 0 && !j->stopping; i++) {
        host_run *h = &j->h[i];
        if (h->out && h->over && !h->joining && h->listed &&
            now >= h->back_at) {
            room -= h->slots;
            begin_join(j, i);
        }
    }
}
