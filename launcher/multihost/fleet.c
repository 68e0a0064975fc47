#include "fleet.h"
#include "fleet_state.h"
#include "relay.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent_brief.h"
#include "agent_link.h"
#include "hvd_exit.h"
#include "stop_signals.h"
#include "local_host.h"
#include "hvd_clock.h"
#include "output.h"
#include "sibling.h"
#include "worker_env.h"
#include "srun_step.h"

double
fleet_stop_deadline(const fleet *j)
{
    return hvd_mono_now() +
           cfg_values_double(&j->s->values, CFG_OPT_KILL_GRACE, 3) + 5;
}

void
fleet_tell(host_run *h, const char *line)
{
    if (h->link && hvdrun_link_is_open(h->link) && !h->over)
        hvdrun_link_send(h->link, line, strlen(line));
}

/* Sends a control line to every agent that runs. */
static void
tell_all(fleet *j, const char *line)
{
    for (int i = 0; i < j->n; i++)
        if (j->h[i].link && hvdrun_link_is_open(j->h[i].link) && !j->h[i].over)
            hvdrun_link_send(j->h[i].link, line, strlen(line));
}

void
fleet_stop_all(fleet *j, const char *why)
{
    char line[700];

    if (j->stopping)
        return;
    j->stopping = 1;
    j->stop_deadline = fleet_stop_deadline(j);
    snprintf(line, sizeof(line), "abort %s\n", why);
    tell_all(j, line);
}

/* Drops a host's link: its agent sees EOF on stdin and stops. */
static void
drop(host_run *h)
{
    hvdrun_link_free(h->link);
    h->link = NULL;
    h->over = 1;
}

/* Keeps a host's first failure, "step: reason"; step NULL when why names
 * its step already (the agent's own errors). Before "go", any failure
 * stops the start everywhere. */
static void
host_error(fleet *j, host_run *h, const char *step, const char *why)
{
    char both[900];

    snprintf(both, sizeof(both), "%s%s%s", step ? step : "", step ? ": " : "",
             why);
    if (h->joining) { /* the job goes on without it */
        fleet_hosts_join_failed(j, h, both);
        return;
    }
    if (j->go_sent && j->el.on) { /* the job may go on without h */
        fprintf(stderr, "hvdrun: %s: %s\n", h->name, both);
        fleet_elastic_host_failed(j, h, -1, HVD_EXIT_LAUNCH);
        return;
    }
    if (h->error[0] == '\0')
        snprintf(h->error, sizeof(h->error), "%s", both);
    if (!j->go_sent)
        j->start_failed = 1;
}

/* ---- what the agents say ---- */

/* A host's first failed rank: the job fails with the first failure the
 * launcher hears of, not with the first agent to end (an agent whose
 * other ranks take the grace to stop ends later than one whose ranks
 * exited on their own). */
static void
on_rank_failed(fleet *j, host_run *h, const char *what)
{
    char why[600];
    int rank = -1, code = 1;

    if (!j->go_sent || j->stopping || j->failed >= 0)
        return;
    if (j->el.on) { /* "RANK CODE": the job may go on without h */
        if (sscanf(what, "%d %d", &rank, &code) != 2)
            rank = -1;
        fleet_elastic_host_failed(j, h, rank, code);
        return;
    }
    j->failed = (int)(h - j->h);
    snprintf(why, sizeof(why), "a rank on %s failed", h->name);
    fleet_stop_all(j, why);
}

static void
on_control(fleet *j, host_run *h, char *msg)
{
    if (strncmp(msg, "ready ", 6) == 0) {
        h->ready = 1;
        if (sscanf(msg + 6, "%63s %63s", h->iface, h->addr) < 1)
            h->iface[0] = '\0';
        if (cfg_values_flag(&j->s->values, CFG_OPT_VERBOSE))
            fprintf(stderr, "hvdrun: %s: agent ready, network %s (%s)\n",
                    h->name, h->iface, h->addr);
        if (h->joining)
            fleet_hosts_ready(j, h);
    } else if (strncmp(msg, "failed ", 7) == 0) {
        on_rank_failed(j, h, msg + 7);
    } else if (strncmp(msg, "error ", 6) == 0) {
        char *colon = strstr(msg + 6, ": ");
        /* "HOST: step: reason": the agent names its step */
        host_error(j, h, NULL, colon ? colon + 2 : msg + 6);
    } else if (strncmp(msg, "call ", 5) == 0 && j->relay) {
        relay_call(j->relay, (int)(h - j->h), h->gen, msg + 5);
    }
}

/* hvdd's answers to the agents' calls, each to the agent that asked */
static void
answer_calls(fleet *j)
{
    unsigned gen;
    char *line;
    int i;

    while (j->relay && relay_take(j->relay, &i, &gen, &line)) {
        if (i >= 0 && i < j->n && j->h[i].gen == gen)
            fleet_tell(&j->h[i], line);
        free(line);
    }
}

/* Where a control line begins in a line from an agent's stdout: at its
 * start, or after its last '\r' (a worker's progress bar ends its
 * segments with '\r' alone, and the agent's next line, a call to hvdd
 * say, follows on the same line); NULL for none. */
static char *
control_in(char *line, size_t len)
{
    size_t pre = strlen(HVDRUN_CONTROL);
    char *cr = memrchr(line, '\r', len);

    if (len >= pre && memcmp(line, HVDRUN_CONTROL, pre) == 0)
        return line; /* (its own text may hold a '\r') */
    if (cr && (size_t)(line + len - (cr + 1)) >= pre &&
        memcmp(cr + 1, HVDRUN_CONTROL, pre) == 0)
        return cr + 1;
    return NULL;
}

static void
emit_line(fleet *j, host_run *h, int stream, char *line, size_t len)
{
    out_sink *sink = &j->sinks[stream];
    char *ctl = stream == 0 ? control_in(line, len) : NULL;

    if (ctl) {
        if (ctl > line && !sink->broken) /* the segments before it */
            out_sink_add(sink, line, (size_t)(ctl - line));
        line[len] = '\0';
        on_control(j, h, ctl + strlen(HVDRUN_CONTROL));
        return;
    }
    if (sink->broken)
        return;
    out_sink_add(sink, line, len);
    out_sink_add(sink, "\n", 1);
}

/* The agents send whole tagged lines; SSH may cut them anywhere. */
static void
feed(fleet *j, host_run *h, int stream, const char *data, size_t n)
{
    line_buf *b = &h->lines[stream];
    char *nl;

    if (b->len + n + 1 > b->cap) {
        size_t cap = (b->len + n + 1) * 2;
        char *p = realloc(b->p, cap);
        if (p == NULL)
            return;
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, data, n);
    b->len += n;
    while ((nl = memchr(b->p, '\n', b->len)) != NULL) {
        size_t len = (size_t)(nl - b->p);
        emit_line(j, h, stream, b->p, len);
        memmove(b->p, nl + 1, b->len - len - 1);
        b->len -= len + 1;
    }
    if (b->len > LINE_LIMIT) { /* a line without end: pass it on in parts */
        /* up to its last '\r' if it has one: a progress bar's segments
         * end there, and an agent's call may be on its way after them */
        char *cr = memrchr(b->p, '\r', b->len);
        size_t cut = cr ? (size_t)(cr - b->p) + 1 : b->len;
        char keep = b->p[cut < b->len ? cut : 0];
        emit_line(j, h, stream, b->p, cut);
        if (cut < b->len)
            b->p[cut] = keep; /* (emit_line may end the line with a NUL) */
        memmove(b->p, b->p + cut, b->len - cut);
        b->len -= cut;
    }
}

/* ---- starting ---- */

/* A joining host's agent gets, until its round is known, the running
 * hosts and itself after them: its NIC choice needs only its name. */
static int
joining_hosts(const fleet *j, const host_run *h, cfg_hostlist *out)
{
    char spec[4096], names[4096];
    size_t at;
    cfg_err e;

    cfg_hostlist_init(out);
    fleet_elastic_remaining(j, spec, sizeof(spec), names, sizeof(names));
    at = strlen(spec);
    fleet_list_add(spec, sizeof(spec), &at, h->name,
                   h->slots > 0 ? h->slots : 1);
    return cfg_hostspec_parse(spec, out, &e) == 0 ? (int)out->count - 1 : -1;
}

static int
send_job(fleet *j, int i)
{
    host_run *h = &j->h[i];
    const char *want = j->spec->rendezvous_addr;
    char cwd[PATH_MAX], *line;
    cfg_hostlist joining;
    hvdrun_brief a = {
        .host = i,
        .hosts = j->s->hosts,
        .np = j->s->plan.size,
        .argv = j->s->command,
        .base = *j->spec->base,
        .cwd = getcwd(cwd, sizeof(cwd)) ? cwd : ".",
        .rendezvous_port = j->spec->rendezvous_port,
        .token = j->spec->token,
        .network_interface =
            cfg_values_get(&j->s->values, CFG_OPT_NETWORK_INTERFACE),
        .output_dir = cfg_values_get(&j->s->values, CFG_OPT_OUTPUT_FILENAME),
        .heartbeat = j->spec->heartbeat,
        .kill_grace = cfg_values_double(&j->s->values, CFG_OPT_KILL_GRACE, 3),
        .start_timeout =
            cfg_values_double(&j->s->values, CFG_OPT_START_TIMEOUT, 30),
        .timestamps = cfg_values_flag(&j->s->values, CFG_OPT_PREFIX_TIMESTAMP),
        .verbose = cfg_values_flag(&j->s->values, CFG_OPT_VERBOSE),
    };
    int r;

    /* hvdd listens on every address unless told otherwise: a host
     * reaches it where its SSH connection came from */
    if (want && strcmp(want, "0.0.0.0") != 0 && strcmp(want, "::") != 0)
        a.rendezvous_addr = want;
    else
        a.rendezvous_addr = hvdrun_link_local_addr(h->link);
    if (h->joining) {
        if ((a.host = joining_hosts(j, h, &joining)) < 0) {
            cfg_hostlist_release(&joining);
            return -1;
        }
        a.hosts = joining;
        a.np = (int)cfg_hostlist_slots(&joining);
    }
    /* (the agent keeps these of the GPU variables: worker_env_node) */
    a.chosen = worker_env_chosen(&j->s->values);
    line = a.chosen ? hvdrun_brief_encode(&a) : NULL;
    free(a.chosen);
    if (h->joining)
        cfg_hostlist_release(&joining);
    if (line == NULL)
        return -1;
    r = hvdrun_link_send(h->link, line, strlen(line));
    free(line);
    return r;
}

/* A link still starting (an SSH login): on, as far as it goes. */
static void
advance_start(fleet *j, int i)
{
    host_run *h = &j->h[i];
    int r = hvdrun_link_advance(h->link);

    if (r < 0) {
        host_error(j, h, hvdrun_link_step(h->link), hvdrun_link_error(h->link));
        drop(h);
    } else if (r == 1 && j->start_failed && !j->spec->check_only) {
        drop(h); /* this host is fine, but the job will not run */
    } else if (r == 1) {
        if (!j->spec->check_only && send_job(j, i) != 0)
            host_error(j, h, "exec", "out of memory");
    }
}

void
fleet_start_host(fleet *j, int i)
{
    host_run *h = &j->h[i];
    char *argv[] = {j->agent_path, NULL};

    h->started = 1;
    h->gen = ++j->agents_started; /* (a host's run is remade when it joins) */
    if (j->step) {                /* every node through srun, this one's too */
        h->remote = 1;
        if ((h->link = hvdrun_link_srun(j->step, (size_t)i)) == NULL) {
            host_error(j, h, "srun", "out of memory");
            h->over = 1;
        } else {
            advance_start(j, i);
        }
        return;
    }
    if (host_is_local(h->name)) {
        if (j->spec->check_only || j->start_failed) {
            h->over = 1; /* no SSH to check */
            return;
        }
        if ((h->link = hvdrun_link_pipes(argv, &j->old_mask)) == NULL) {
            host_error(j, h, "exec", strerror(errno));
            h->over = 1;
        } else if (send_job(j, i) != 0) {
            host_error(j, h, "exec", "out of memory");
        }
        return;
    }
    h->remote = 1;
    if ((h->link = j->spec->ssh ? j->spec->ssh->open(j, i) : NULL) == NULL) {
        host_error(j, h, "connect",
                   j->spec->ssh ? "out of memory"
                                : "this program logs in nowhere over SSH");
        h->over = 1;
    } else {
        advance_start(j, i); /* a failure to resolve shows at once */
    }
}

/* Starts hosts while fewer than --ssh-parallel are logging in. */
static void
start_more(fleet *j)
{
    int busy = 0,
        bound = (int)cfg_values_long(&j->s->values, CFG_OPT_SSH_PARALLEL, 8);

    for (int i = 0; i < j->n; i++)
        busy += j->h[i].link && !j->h[i].over &&
                hvdrun_link_logging_in(j->h[i].link);
    /* after a failure the others are still checked, so that one run
     * reports every broken host */
    for (int i = 0; i < j->n && busy < bound; i++)
        if (!j->h[i].started && !j->h[i].out) { /* (spares join later) */
            fleet_start_host(j, i);
            busy += j->h[i].remote && !j->h[i].over;
        }
}

/* ---- running ---- */

static void
on_agent_end(fleet *j, host_run *h)
{
    int code = h->code = hvdrun_link_code(h->link);

    h->over = 1;
    if (h->joining) {
        char why[64];
        snprintf(why, sizeof(why), "its agent exited with code %d", code);
        fleet_hosts_join_failed(j, h, why);
        return;
    }
    if (!j->go_sent) {
        if (code == 0 && j->spec->check_only)
            return;
        if (code == 127)
            host_error(j, h, "exec",
                       "hvdrun is missing there (give its path with "
                       "--remote-hvdrun)");
        else if (!j->stopping || code != 0) {
            char why[64];
            snprintf(why, sizeof(why), "the agent exited with code %d", code);
            host_error(j, h, "exec", why);
        }
        return;
    }
    if (j->el.on && code != 0 && !h->out) /* ended before it said why */
        fleet_elastic_host_failed(j, h, -1, code);
    if (j->el.on)
        return;
    if (code != 0 && !j->stopping && j->failed < 0) {
        char why[600];
        j->failed = (int)(h - j->h);
        snprintf(why, sizeof(why), "a rank on %s failed", h->name);
        fleet_stop_all(j, why);
    }
}

static void
service(fleet *j, int i)
{
    host_run *h = &j->h[i];
    char buf[65536];
    ssize_t n;

    if (h->link == NULL || h->over)
        return;
    if (!hvdrun_link_is_open(h->link)) {
        advance_start(j, i);
        if (h->link == NULL || !hvdrun_link_is_open(h->link))
            return;
    }
    hvdrun_link_flush(h->link);
    for (int k = 0; k < 2; k++)
        while ((n = hvdrun_link_read(h->link, k, buf, sizeof(buf))) > 0)
            feed(j, h, k, buf, (size_t)n);
    /* a broken connection reads as EOF on both streams, and the reap
     * below ends the host */
    if (hvdrun_link_reap(h->link))
        on_agent_end(j, h);
}

static void
keepalive(host_run *h)
{
    if (h->link && !h->over)
        hvdrun_link_keepalive(h->link);
}

static int
all_ready(const fleet *j)
{
    for (int i = 0; i < j->n; i++)
        if (!j->h[i].ready && !j->h[i].out)
            return 0;
    return 1;
}

static void
on_signals(fleet *j)
{
    enum hvdrun_signal what;
    int sig;

    while ((what = hvdrun_signals_next(j->sigfd, &j->interrupted, j->stopping,
                                       &sig)) != HVDRUN_SIGNAL_NONE) {
        if (what == HVDRUN_SIGNAL_KILL) {
            tell_all(j, "kill\n");
            continue;
        }
        progress_clear(&j->progress);
        fprintf(stderr,
                "hvdrun: %s: stopping the workers on %d hosts (again to "
                "kill)\n",
                strsignal(sig), j->n);
        if (!j->go_sent)
            j->start_failed = 1;
        fleet_stop_all(j, "interrupted");
    }
}

/* One of hvdd's lines: "abort REASON" stops the job, "warn LINE" (a
 * rank's, the stall check's) is printed. */
static void
on_event_line(fleet *j, const char *line)
{
    if (strncmp(line, "warn ", 5) == 0) {
        progress_clear(&j->progress);
        out_sink_flush(&j->sinks[1]); /* after what the ranks said before */
        fprintf(stderr, "hvdrun: %s\n", line + 5);
    } else if (strncmp(line, "abort ", 6) == 0) {
        snprintf(j->aborted, sizeof(j->aborted), "%.500s", line + 6);
        fleet_stop_all(j, j->aborted);
    }
}

/* hvdd's lines; EOF: hvdd is gone. */
static void
on_events(fleet *j)
{
    size_t room = sizeof(j->events) - 1 - j->events_len;
    ssize_t n = read(j->events_fd, j->events + j->events_len, room);
    char *nl;

    if (n <= 0) {
        j->events_fd = -1;
        snprintf(j->aborted, sizeof(j->aborted),
                 "the rendezvous daemon hvdd exited");
        fleet_stop_all(j, j->aborted);
        return;
    }
    j->events_len += (size_t)n;
    j->events[j->events_len] = '\0';
    while ((nl = strchr(j->events, '\n')) != NULL) {
        *nl = '\0';
        on_event_line(j, j->events);
        j->events_len -= (size_t)(nl + 1 - j->events);
        memmove(j->events, nl + 1, j->events_len + 1);
    }
    if (j->events_len == sizeof(j->events) - 1)
        j->events_len = 0; /* an endless line: dropped */
}

static int
over(const fleet *j)
{
    for (int i = 0; i < j->n; i++)
        if (!j->h[i].over)
            return 0;
    return 1;
}

/* Waits for the sockets and pipes; libssh2 may hold data that does not
 * wake poll, so every link is serviced after each wake-up anyway. */
static void
wait_io(fleet *j)
{
    struct pollfd p[5 + 2 * j->n];
    int m = 0, ms = 100;

    p[m++] = (struct pollfd){j->sigfd, POLLIN, 0};
    if (j->events_fd >= 0)
        p[m++] = (struct pollfd){j->events_fd, POLLIN, 0};
    if (j->relay) { /* (-1 once hvdd is gone: poll skips it) */
        p[m] = (struct pollfd){-1, 0, 0};
        p[m].fd = relay_fd(j->relay, &p[m].events);
        m++;
    }
    for (int k = 0; k < 2; k++) /* the discovery script's pipes */
        if (fleet_hosts_fd(j, k) >= 0)
            p[m++] = (struct pollfd){fleet_hosts_fd(j, k), POLLIN, 0};
    for (int i = 0; i < j->n; i++)
        for (int k = 0; k < 2; k++) {
            short ev;
            int fd = j->h[i].link && !j->h[i].over
                         ? hvdrun_link_pollfd(j->h[i].link, k, &ev)
                         : -1;
            if (fd >= 0)
                p[m++] = (struct pollfd){fd, ev, 0};
        }
    for (int i = 0; i < j->n; i++)
        if (j->h[i].link && !j->h[i].over && hvdrun_link_ready(j->h[i].link))
            ms = 0; /* its event was taken in by another call */
    if (j->relay && relay_ready(j->relay))
        ms = 0; /* an answer is here already */
    poll(p, m, ms);
    if (p[0].revents)
        on_signals(j);
    if (j->events_fd >= 0 && p[1].revents)
        on_events(j);
}

static void
check_deadlines(fleet *j)
{
    double t = hvd_mono_now();

    if (!j->go_sent && !j->start_failed && t > j->start_deadline) {
        progress_clear(&j->progress);
        fprintf(stderr,
                "hvdrun: not every host was ready within %g s "
                "(--start-timeout):",
                cfg_values_double(&j->s->values, CFG_OPT_START_TIMEOUT, 30));
        for (int i = 0; i < j->n; i++) {
            host_run *h = &j->h[i];
            if (h->ready || h->out)
                continue;
            fprintf(stderr, " %s (%s)", h->name,
                    !h->started ? "not started"
                    : h->link && !hvdrun_link_is_open(h->link)
                        ? hvdrun_link_step(h->link)
                        : "network choice");
        }
        fputc('\n', stderr);
        j->start_failed = 1;
        for (int i = 0; i < j->n; i++) /* past the deadline: give up */
            if (!j->h[i].over) {
                if (j->h[i].started)
                    drop(&j->h[i]);
                j->h[i].over = 1;
            }
    }
    for (int i = 0; i < j->n; i++) /* elastic: a host out that hangs */
        if (j->h[i].out && !j->h[i].over && t > j->h[i].out_deadline) {
            /* (said, not the job's failure: the job went on without it) */
            fprintf(stderr,
                    "hvdrun: %s: its agent did not finish after the host "
                    "left the job: dropped\n",
                    j->h[i].name);
            drop(&j->h[i]);
        }
    if (j->stopping && t > j->stop_deadline)
        for (int i = 0; i < j->n; i++)
            if (j->h[i].started && !j->h[i].over) {
                host_error(j, &j->h[i], "stop", "the agent did not finish");
                drop(&j->h[i]);
            }
}

/* Writes the output gathered this turn, and around it the progress line
 * while agents start (how many are ready, failed): what agents print goes
 * out on a clean line, and the line goes once the job runs. */
static void
flush_output(fleet *j)
{
    int starting = !j->go_sent && !j->spec->check_only, ready = 0, failed = 0;

    if (!starting || j->sinks[0].len || j->sinks[1].len)
        progress_clear(&j->progress);
    out_sink_flush(&j->sinks[0]);
    out_sink_flush(&j->sinks[1]);
    if (!starting)
        return;
    /* a host counts once its agent runs: their "ready" comes after the
     * NIC choice, which waits for every host, so it would jump from none
     * to all at the end */
    for (int i = 0; i < j->n; i++) {
        host_run *h = &j->h[i];
        ready += h->ready || (h->link && !h->over && !h->error[0] &&
                              hvdrun_link_is_open(h->link));
        failed += h->error[0] != '\0';
    }
    progress_update(&j->progress, ready, failed);
}

static void
loop(fleet *j)
{
    while (!over(j)) {
        start_more(j);
        if (j->start_failed && !j->go_sent && !j->spec->check_only) {
            /* nothing may start anywhere: every agent sees EOF and exits */
            for (int i = 0; i < j->n; i++)
                if (j->h[i].link && !j->h[i].over &&
                    hvdrun_link_is_open(j->h[i].link))
                    drop(&j->h[i]);
            if (over(j))
                break;
        }
        wait_io(j);
        answer_calls(j);
        for (int i = 0; i < j->n; i++) {
            service(j, i);
            keepalive(&j->h[i]);
        }
        if (!j->go_sent && !j->start_failed && !j->spec->check_only &&
            all_ready(j)) {
            tell_all(j, "go\n");
            j->go_sent = 1;
        }
        flush_output(j);
        check_deadlines(j);
        fleet_elastic_check(j);
        fleet_hosts_turn(j);
    }
    progress_clear(&j->progress);
    for (int i = 0; i < j->n; i++)
        for (int k = 0; k < 2; k++)
            if (j->h[i].lines[k].len) /* a last line without newline */
                emit_line(j, &j->h[i], k, j->h[i].lines[k].p,
                          j->h[i].lines[k].len);
    out_sink_flush(&j->sinks[0]);
    out_sink_flush(&j->sinks[1]);
}

/* ---- outcome ---- */

static int
report(fleet *j)
{
    int errors = 0;

    /* srun's last lines first: a scancel's "CANCELLED" comes from
     * slurmstepd through srun, and may arrive after the agents' ends
     * (netlab.slurm saw it once: hvdrun exited 143 without saying the
     * job was cancelled) */
    if (j->step)
        srun_step_end(j->step);

    for (int i = 0; i < j->n; i++)
        if (j->h[i].error[0]) {
            fprintf(stderr, "hvdrun: %s: %s\n", j->h[i].name, j->h[i].error);
            errors++;
        }
    if (j->spec->check_only) {
        for (int i = 0; i < j->n; i++)
            if (!j->h[i].error[0])
                printf("%s: ok%s\n", j->h[i].name,
                       j->h[i].remote || !j->h[i].started ? ""
                                                          : " (this machine)");
        return errors ? HVD_EXIT_LAUNCH : HVD_EXIT_OK;
    }
    if (j->start_failed) {
        if (!j->interrupted)
            fprintf(stderr, "hvdrun: no worker was started on any host\n");
        return j->interrupted ? 128 + j->interrupted : HVD_EXIT_LAUNCH;
    }
    if (j->step && srun_step_cancelled(j->step)) {
        /* Slurm stopped the step itself: every rank got its SIGTERM */
        fprintf(stderr,
                "hvdrun: the Slurm job was cancelled (scancel, a time limit "
                "or a failed node): the workers were stopped\n");
        return 128 + SIGTERM;
    }
    if (j->failed >= 0) {
        fprintf(stderr, "hvdrun: job failed on %s; stopped the other hosts\n",
                j->h[j->failed].name);
        return j->h[j->failed].code;
    }
    if (j->el.gave_up_code) /* said why when it gave up */
        return j->el.gave_up_code;
    if (j->el.short_since && !j->interrupted && !j->aborted[0]) {
        /* everything ended by itself while below --min-np */
        fprintf(stderr,
                "hvdrun: the job ended with fewer than --min-np %ld ranks\n",
                j->el.min_np);
        return fleet_elastic_code(j);
    }
    if (j->aborted[0]) {
        fprintf(stderr, "hvdrun: job stopped: %s\n", j->aborted);
        return HVD_EXIT_RENDEZVOUS;
    }
    if (j->interrupted)
        return 128 + j->interrupted;
    return errors ? HVD_EXIT_LAUNCH : HVD_EXIT_OK;
}

/* Every host's agent ended 0, and nothing else went wrong. */
static int
clean_end(const fleet *j)
{
    if (j->start_failed || j->failed >= 0 || j->aborted[0] || j->interrupted ||
        j->el.gave_up_code || j->el.short_since)
        return 0;
    for (int i = 0; i < j->n; i++)
        if (j->h[i].error[0] || j->h[i].code != 0)
            return 0;
    return 1;
}

/* ---- setup ---- */

static void
clear_progress(void *p)
{
    progress_clear(p);
}

static int
setup(fleet *j)
{
    if (sibling_path("hvdrun-agent", j->agent_path, sizeof(j->agent_path)))
        return -1;
    /* (under srun, whose step starts every agent, nothing of SSH is set
     * up, so as not to take CPU from Slurm's start of the step) */
    if (j->step == NULL && (j->spec->ssh == NULL || j->spec->ssh->setup(j)))
        return -1;
    j->sigfd = hvdrun_signals_open(&j->old_mask);
    if (j->sigfd < 0)
        return -1;
    if (!j->spec->check_only && (j->relay = relay_new(j->spec->chan)) == NULL)
        return -1;
    if (j->step) /* srun's lines go out on a clean line */
        srun_step_on_print(j->step, clear_progress, &j->progress);
    return 0;
}

static void
release(fleet *j)
{
    fleet_elastic_release(j);
    for (int i = 0; i < j->n; i++) {
        hvdrun_link_free(j->h[i].link);
        free(j->h[i].lines[0].p);
        free(j->h[i].lines[1].p);
    }
    free(j->h);
    srun_step_free(j->step); /* srun ends with its agents */
    /* (the agents' last reports went to hvdd as they came, before any
     * later call of the summary's: hvdd takes the channel in order) */
    relay_free(j->relay);
    out_sink_release(&j->sinks[0]);
    out_sink_release(&j->sinks[1]);
    if (j->sigfd >= 0)
        close(j->sigfd);
    sigprocmask(SIG_SETMASK, &j->old_mask, NULL);
    if (j->links_begun)
        j->spec->ssh->end(j);
}

int
fleet_run(const fleet_spec *spec)
{
    fleet j = {.spec = spec,
               .s = spec->s,
               .n = spec->s->plan.nhosts,
               .sigfd = -1,
               .events_fd = spec->events_fd,
               .failed = -1,
               .step = spec->step}; /* started before hvdd; ours to free */
    int code;

    out_sink_init(&j.sinks[0], STDOUT_FILENO);
    out_sink_init(&j.sinks[1], STDERR_FILENO);
    sigemptyset(&j.old_mask);
    if ((j.h = calloc(j.n, sizeof(*j.h))) == NULL || setup(&j) != 0) {
        fprintf(stderr, "hvdrun: cannot set up the job: %s\n", strerror(errno));
        release(&j);
        return HVD_EXIT_LAUNCH;
    }
    for (int i = 0; i < j.n; i++)
        j.h[i].name = spec->s->hosts.hosts[i].name;
    if (!spec->check_only && fleet_elastic_init(&j) != 0) {
        fprintf(stderr, "hvdrun: cannot set up the job: out of memory\n");
        release(&j);
        return HVD_EXIT_LAUNCH;
    }
    progress_init(&j.progress, spec->s->plan.nhosts,
                  !cfg_values_flag(&spec->s->values, CFG_OPT_VERBOSE));
    j.start_deadline =
        hvd_mono_now() +
        cfg_values_double(&spec->s->values, CFG_OPT_START_TIMEOUT, 30);
    loop(&j);
    if (spec->hvdd_done && !spec->check_only && clean_end(&j))
        spec->hvdd_done(spec->arg); /* while Slurm ends its step */
    code = report(&j);
    if (spec->interrupted)
        *spec->interrupted = j.interrupted;
    release(&j);
    return code;
}
