#include "worker_group.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "descendants.h"
#include "hvd_exit.h"
#include "guard.h"
#include "stop_signals.h"
#include "hvd_clock.h"
#include "output.h"
#include "spawn.h"

typedef struct worker {
    spawned sp; /* fds are -1 once closed */
    out_stream streams[2];
    int started; /* exec happened (or failed) */
    int exec_errno;
    int reaped;
    int status;
} worker;

typedef struct run {
    const worker_group_spec *spec;
    worker *w;
    int n;
    out_sink sinks[2];
    sigset_t old_mask;
    int sigfd, guard_fd;
    pid_t keep[9]; /* not the job's: the guard, then spec->keep */
    int nkeep;
    int stopping;   /* 0 running, 1 SIGTERM sent, 2 SIGKILL sent */
    double kill_at; /* when stopping == 1: SIGKILL then */
    double start_deadline;
    int failed;      /* index of the first worker that failed, or -1 */
    int interrupted; /* the signal that stopped the job, or 0 */
    int start_failed;
    int unreaped;
    int stopped; /* workers still running when the failure stopped them */
    int events_fd;
    char events[1024]; /* a partial line from hvdd */
    size_t events_len;
    char aborted[600]; /* why hvdd stopped the job, or "" */
} run;

/* Worker i runs this rank of the plan. */
static int
rank_of(const run *r, int i)
{
    return r->spec->first_rank + i;
}

static void
close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

/* Every process below this one but those kept: what the workers left
 * outside their process groups (setsid), which this process, a child
 * subreaper, inherits when their parents end. */
static void
signal_escaped(run *r, int sig)
{
    pid_set left;

    if (descendants_any(r->keep, r->nkeep) == 0 ||
        descendants_find(r->keep, r->nkeep, &left) != 0)
        return;
    for (size_t i = 0; i < left.n; i++)
        kill(left.v[i], sig);
    pid_set_release(&left);
}

static void
signal_groups(run *r, int sig)
{
    for (int i = 0; i < r->n; i++)
        if (r->w[i].sp.pid > 0)
            kill(-r->w[i].sp.pid, sig);
    signal_escaped(r, sig);
}

static void
begin_stop(run *r)
{
    if (r->stopping)
        return;
    r->stopping = 1;
    r->kill_at = hvd_mono_now() + r->spec->kill_grace;
    signal_groups(r, SIGTERM);
}

/* After SIGKILL, output still held after the grace is given up on. */
static void
kill_now(run *r)
{
    r->stopping = 2;
    r->kill_at = hvd_mono_now() + r->spec->kill_grace;
    signal_groups(r, SIGKILL);
}

static int
setup_signals(run *r)
{
    r->sigfd = hvdrun_signals_open(&r->old_mask);
    return r->sigfd < 0 ? -1 : 0;
}

static int
start_workers(run *r)
{
    const worker_group_spec *s = r->spec;
    static const char *names[2] = {"stdout", "stderr"};

    for (int i = 0; i < r->n; i++) {
        worker *w = &r->w[i];
        for (int k = 0; k < 2; k++) {
            int fd = -1;
            if (s->output_dir &&
                (fd = out_open_rank_file(s->output_dir, rank_of(r, i),
                                         s->plan->size, names[k])) < 0) {
                fprintf(stderr, "hvdrun: cannot write '%s/rank.%d/%s': %s\n",
                        s->output_dir, rank_of(r, i), names[k],
                        strerror(errno));
                return -1;
            }
            out_stream_init(&w->streams[k], rank_of(r, i), k, s->timestamps,
                            fd);
        }
        if (spawn_worker(s->argv, s->envp[i], &r->old_mask, &w->sp) != 0) {
            fprintf(stderr, "hvdrun: cannot start rank %d: %s\n", rank_of(r, i),
                    strerror(errno));
            w->sp = (spawned){0, -1, -1, -1};
            return -1;
        }
        guard_add(r->guard_fd, w->sp.pid);
        r->unreaped++;
    }
    return 0;
}

static void
on_exit_status(run *r, int i, int status)
{
    worker *w = &r->w[i];

    w->reaped = 1;
    w->status = status;
    r->unreaped--;
    guard_remove(r->guard_fd, w->sp.pid);
    if (r->spec->on_worker_end)
        r->spec->on_worker_end(r->spec->on_worker_end_arg, rank_of(r, i),
                               (int)w->sp.pid, status);
    if (r->spec->verbose)
        fprintf(stderr, "hvdrun: rank %d (pid %d) ended, wait status %#x\n",
                rank_of(r, i), (int)w->sp.pid, status);
    if (status != 0 && r->failed < 0 && !r->stopping) {
        r->failed = i;
        r->stopped = r->unreaped;
        begin_stop(r);
    }
}

static void
reap(run *r)
{
    int status;
    pid_t pid;

    while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
        for (int i = 0; i < r->n; i++)
            if (r->w[i].sp.pid == pid && !r->w[i].reaped) {
                on_exit_status(r, i, status);
                break;
            }
}

static void
on_signals(run *r)
{
    enum hvdrun_signal what;
    int sig;

    while ((what = hvdrun_signals_next(r->sigfd, &r->interrupted, r->stopping,
                                       &sig)) != HVDRUN_SIGNAL_NONE) {
        if (what == HVDRUN_SIGNAL_KILL) {
            kill_now(r);
            continue;
        }
        fprintf(stderr, "hvdrun: %s: stopping %d workers (again to kill)\n",
                strsignal(sig), r->unreaped);
        begin_stop(r);
    }
    reap(r);
}

static void
stop_for(run *r, const char *why)
{
    if (r->aborted[0] == '\0')
        snprintf(r->aborted, sizeof(r->aborted), "%s", why);
    if (r->failed < 0)
        r->stopped = r->unreaped;
    begin_stop(r);
}

/* "PID RANK": an elastic round gave worker PID that rank; its output is
 * tagged with it from now on. */
static void
retag(run *r, const char *what)
{
    int pid, rank;

    if (sscanf(what, "%d %d", &pid, &rank) != 2)
        return;
    for (int i = 0; i < r->n; i++)
        if (r->w[i].sp.pid == pid) {
            out_stream_retag(&r->w[i].streams[0], rank, 0);
            out_stream_retag(&r->w[i].streams[1], rank, 1);
        }
}

/* hvdd's reports: "abort REASON" and "warn LINE" lines, "kill", and for
 * an agent its
 * launcher's "rank PID RANK"; EOF means the sender is gone. */
static void
on_events(run *r)
{
    ssize_t n = read(r->events_fd, r->events + r->events_len,
                     sizeof(r->events) - 1 - r->events_len);
    char *nl;

    if (n <= 0) {
        r->events_fd = -1; /* the rendezvous owns and closes it */
        if (r->unreaped > 0)
            stop_for(r, r->spec->events_eof ? r->spec->events_eof
                                            : "the rendezvous daemon hvdd "
                                              "exited");
        return;
    }
    r->events_len += (size_t)n;
    r->events[r->events_len] = '\0';
    while ((nl = strchr(r->events, '\n')) != NULL) {
        *nl = '\0';
        if (strncmp(r->events, "abort ", 6) == 0)
            stop_for(r, r->events + 6);
        else if (strncmp(r->events, "warn ", 5) == 0) /* a rank's, via hvdd */
            fprintf(stderr, "hvdrun: %s\n", r->events + 5);
        else if (strncmp(r->events, "rank ", 5) == 0)
            retag(r, r->events + 5);
        else if (strcmp(r->events, "kill") == 0)
            kill_now(r);
        r->events_len -= (size_t)(nl + 1 - r->events);
        memmove(r->events, nl + 1, r->events_len + 1);
    }
    if (r->events_len == sizeof(r->events) - 1)
        r->events_len = 0; /* an endless line: drop it */
}

/* Reads what one fd has; returns 1 after data, 0 at EOF or error (the fd
 * is closed then), -1 when nothing is there yet. */
static int
drain(run *r, int i, int k)
{
    char buf[65536];
    worker *w = &r->w[i];
    int *fd = k == 0 ? &w->sp.out_fd : &w->sp.err_fd;
    ssize_t n = read(*fd, buf, sizeof(buf));

    if (n > 0) {
        out_stream_feed(&w->streams[k], buf, n, &r->sinks[k]);
        return 1;
    }
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return -1;
    out_stream_finish(&w->streams[k], &r->sinks[k]);
    close_fd(fd);
    return 0;
}

static void
on_status_fd(run *r, int i)
{
    worker *w = &r->w[i];

    w->started = 1;
    if (spawn_exec_errno(w->sp.status_fd, &w->exec_errno) != 1)
        w->exec_errno = 0;
    close_fd(&w->sp.status_fd);
}

/* Builds the poll set; returns its size. idx[j] is worker*4+kind. */
static int
poll_set(run *r, struct pollfd *p, int *idx)
{
    int m = 0;

    p[m] = (struct pollfd){r->sigfd, POLLIN, 0};
    idx[m++] = -1;
    if (r->events_fd >= 0) {
        p[m] = (struct pollfd){r->events_fd, POLLIN, 0};
        idx[m++] = -2;
    }
    for (int i = 0; i < r->n; i++) {
        int fds[3] = {r->w[i].sp.out_fd, r->w[i].sp.err_fd,
                      r->w[i].sp.status_fd};
        for (int k = 0; k < 3; k++)
            if (fds[k] >= 0) {
                p[m] = (struct pollfd){fds[k], POLLIN, 0};
                idx[m++] = i * 4 + k;
            }
    }
    return m;
}

static int
poll_timeout(run *r)
{
    double t = -1, d;

    if (r->stopping) /* SIGKILL, or giving up on held output, then */
        t = r->kill_at;
    if (r->start_deadline > 0 && (t < 0 || r->start_deadline < t))
        t = r->start_deadline;
    if (t < 0)
        return -1;
    d = (t - hvd_mono_now()) * 1000;
    return d < 0 ? 0 : (int)d + 1;
}

static int
open_fds(const run *r)
{
    int n = 0;

    for (int i = 0; i < r->n; i++)
        n += (r->w[i].sp.out_fd >= 0) + (r->w[i].sp.err_fd >= 0) +
             (r->w[i].sp.status_fd >= 0);
    return n;
}

static void
check_start(run *r)
{
    int late = 0;

    for (int i = 0; i < r->n; i++)
        late += !r->w[i].started;
    if (late == 0) {
        r->start_deadline = 0;
        return;
    }
    if (hvd_mono_now() < r->start_deadline)
        return;
    r->start_deadline = 0;
    r->start_failed = 1;
    fprintf(stderr,
            "hvdrun: %d of %d workers did not start within %g s "
            "(--start-timeout); first late rank:",
            late, r->n, r->spec->start_timeout);
    for (int i = 0; i < r->n; i++)
        if (!r->w[i].started) {
            fprintf(stderr, " %d\n", rank_of(r, i));
            break;
        }
    begin_stop(r);
}

/* Says which process keeps rank i's output open now that the rank ended. */
static void
name_holders(run *r, int i, pid_set *left)
{
    int fds[2] = {r->w[i].sp.out_fd, r->w[i].sp.err_fd};
    struct stat st;
    char cmd[160];

    for (int k = 0; k < 2; k++) {
        if (fds[k] < 0 || fstat(fds[k], &st) != 0)
            continue;
        for (size_t j = 0; j < left->n; j++)
            if (proc_holds(left->v[j], st.st_ino)) {
                proc_command(left->v[j], cmd, sizeof(cmd));
                fprintf(stderr,
                        "hvdrun: rank %d exited, but pid %d (%s) still holds "
                        "its %s: stopping it\n",
                        rank_of(r, i), (int)left->v[j], cmd,
                        k ? "stderr" : "stdout");
            }
    }
}

/* Reads the output fds to their end where the writers are gone: a
 * worker reaped in this round may have its EOF still unread. Bounded: a
 * holder that keeps writing stays open. */
static void
drain_ended(run *r)
{
    for (int i = 0; i < r->n; i++) {
        for (int k = 0; k < 2; k++) {
            int *fd = k == 0 ? &r->w[i].sp.out_fd : &r->w[i].sp.err_fd;
            for (int reads = 0; *fd >= 0 && reads < 64; reads++)
                if (drain(r, i, k) != 1)
                    break;
        }
        if (r->w[i].sp.status_fd >= 0)
            on_status_fd(r, i);
    }
}

static void
check_timers(run *r)
{
    if (r->start_deadline > 0)
        check_start(r);
    if (r->unreaped == 0 && !r->stopping && open_fds(r) > 0)
        drain_ended(r);
    /* Every worker is gone but something they started holds the pipes:
     * stop it as a failure would, saying what it is. */
    if (r->unreaped == 0 && !r->stopping && open_fds(r) > 0) {
        pid_set left;
        if (descendants_find(r->keep, r->nkeep, &left) == 0) {
            for (int i = 0; i < r->n; i++)
                name_holders(r, i, &left);
            pid_set_release(&left);
        }
        begin_stop(r);
    }
    if (r->stopping == 1 && hvd_mono_now() >= r->kill_at) {
        kill_now(r);
    } else if (r->stopping == 2 && r->unreaped == 0 &&
               hvd_mono_now() >= r->kill_at) {
        /* Escaped the groups (setsid): stop waiting for their output. */
        for (int i = 0; i < r->n; i++) {
            close_fd(&r->w[i].sp.out_fd);
            close_fd(&r->w[i].sp.err_fd);
            close_fd(&r->w[i].sp.status_fd);
        }
    }
}

static void
loop(run *r)
{
    int cap = 2 + 3 * r->n;
    struct pollfd *p = calloc(cap, sizeof(*p));
    int *idx = calloc(cap, sizeof(*idx));

    if (p == NULL || idx == NULL) {
        fprintf(stderr, "hvdrun: out of memory\n");
        kill_now(r);
    }
    while (p && idx && (r->unreaped > 0 || open_fds(r) > 0)) {
        int m = poll_set(r, p, idx);
        if (poll(p, m, poll_timeout(r)) < 0 && errno != EINTR)
            break;
        for (int j = 0; j < m; j++) {
            if (!p[j].revents)
                continue;
            if (idx[j] == -1)
                on_signals(r);
            else if (idx[j] == -2)
                on_events(r);
            else if (idx[j] % 4 == 2)
                on_status_fd(r, idx[j] / 4);
            else
                drain(r, idx[j] / 4, idx[j] % 4);
        }
        out_sink_flush(&r->sinks[0]);
        out_sink_flush(&r->sinks[1]);
        check_timers(r);
    }
    /* Only reached early on a poll or memory failure: leave nothing. */
    if (r->unreaped > 0) {
        kill_now(r);
        while (r->unreaped > 0 && waitpid(-1, NULL, 0) > 0)
            r->unreaped--;
    }
    free(p);
    free(idx);
}

/* Names a leftover and sends it SIGTERM, once. */
static void
stop_one(pid_set *told, pid_t pid)
{
    int rank = proc_rank(pid);
    char cmd[160];

    if (pid_set_has(told, pid))
        return;
    proc_command(pid, cmd, sizeof(cmd));
    if (rank >= 0)
        fprintf(stderr,
                "hvdrun: stopping pid %d (%s), left running by rank %d\n",
                (int)pid, cmd, rank);
    else
        fprintf(stderr,
                "hvdrun: stopping pid %d (%s), left running by the job\n",
                (int)pid, cmd);
    kill(pid, SIGTERM);
    pid_set_add(told, pid); /* out of memory: named twice, no worse */
}

/* Processes the workers left running with their output elsewhere (a
 * daemon): stopped with the job, each named, with SIGTERM, then after the
 * grace SIGKILL, then given up on 2 s later. Rescanned every 20 ms: a
 * process is found below this one only once its parents have ended. */
static void
stop_leftovers(run *r)
{
    pid_set told = {0}, left;
    double until = hvd_mono_now() + r->spec->kill_grace;
    int killed = 0;
    pid_t gone;

    for (;;) {
        /* (the guard, told to go, may be among them: reaped here, it is
         * not waited for again, by a pid that may be another's by then) */
        while ((gone = waitpid(-1, NULL, WNOHANG)) > 0)
            if (gone == r->keep[0])
                r->keep[0] = 0;
        if (descendants_any(r->keep, r->nkeep) == 0)
            break;
        if (descendants_find(r->keep, r->nkeep, &left) == 0) {
            for (size_t i = 0; !killed && i < left.n; i++)
                stop_one(&told, left.v[i]);
            pid_set_release(&left);
        }
        if (hvd_mono_now() >= until) {
            if (killed)
                break;
            signal_escaped(r, SIGKILL);
            killed = 1;
            until = hvd_mono_now() + 2;
        }
        poll(NULL, 0, 20);
    }
    pid_set_release(&told);
}

static int
wait_code(int status)
{
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return HVD_EXIT_LAUNCH;
}

/* The one summary a failed job prints. */
static void
report_failure(const run *r)
{
    const worker *w = &r->w[r->failed];
    int rank = rank_of(r, r->failed);
    const char *host =
        r->spec->hosts->hosts[r->spec->plan->slots[rank].host].name;
    char tail[2048], *line, *save = NULL;

    if (w->exec_errno)
        fprintf(stderr, "hvdrun: rank %d on %s: cannot run '%s': %s\n", rank,
                host, r->spec->argv[0], strerror(w->exec_errno));
    else if (WIFSIGNALED(w->status))
        fprintf(stderr, "hvdrun: rank %d on %s was killed by signal %d (%s)\n",
                rank, host, WTERMSIG(w->status),
                strsignal(WTERMSIG(w->status)));
    else
        fprintf(stderr, "hvdrun: rank %d on %s exited with code %d\n", rank,
                host, WEXITSTATUS(w->status));
    if (r->stopped > 0)
        fprintf(stderr, "hvdrun: stopped %d other rank%s still running\n",
                r->stopped, r->stopped == 1 ? "" : "s");
    out_stream_last_lines(&w->streams[1], 10, tail, sizeof(tail));
    if (tail[0] == '\0')
        return;
    fprintf(stderr, "hvdrun: last stderr lines of rank %d:\n", rank);
    for (line = strtok_r(tail, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save))
        fprintf(stderr, "  %s\n", line);
}

static int
exit_code(const run *r)
{
    if (r->aborted[0] && r->failed < 0) {
        /* an agent's launcher says why itself */
        if (r->spec->events_eof == NULL) {
            fprintf(stderr, "hvdrun: job stopped: %s\n", r->aborted);
            if (r->stopped > 0)
                fprintf(stderr, "hvdrun: stopped %d rank%s still running\n",
                        r->stopped, r->stopped == 1 ? "" : "s");
        }
        return HVD_EXIT_RENDEZVOUS;
    }
    if (r->failed >= 0) {
        report_failure(r);
        return wait_code(r->w[r->failed].status);
    }
    if (r->start_failed)
        return HVD_EXIT_LAUNCH;
    if (r->interrupted)
        return 128 + r->interrupted;
    return HVD_EXIT_OK;
}

static void
release(run *r)
{
    for (int i = 0; i < r->n; i++) {
        close_fd(&r->w[i].sp.out_fd);
        close_fd(&r->w[i].sp.err_fd);
        close_fd(&r->w[i].sp.status_fd);
        out_stream_release(&r->w[i].streams[0]);
        out_stream_release(&r->w[i].streams[1]);
    }
    out_sink_release(&r->sinks[0]);
    out_sink_release(&r->sinks[1]);
    close_fd(&r->sigfd);
    close_fd(&r->guard_fd); /* (an early return's: the guard exits) */
    if (r->nkeep > 0 && r->keep[0] > 0)
        waitpid(r->keep[0], NULL, 0);
    sigprocmask(SIG_SETMASK, &r->old_mask, NULL);
    free(r->w);
}

int
worker_group_run(const worker_group_spec *spec)
{
    run r = {.spec = spec,
             .n = spec->nranks > 0 ? spec->nranks : spec->plan->size,
             .sigfd = -1,
             .failed = -1,
             .events_fd = spec->events_fd};
    int code;

    out_sink_init(&r.sinks[0], STDOUT_FILENO);
    out_sink_init(&r.sinks[1], STDERR_FILENO);
    r.guard_fd = -1;
    /* what a worker starts and leaves, even after setsid(), stays below
     * this process, to be stopped with the job */
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    r.nkeep = 1; /* keep[0]: the guard, once started */
    for (int i = 0; i < spec->nkeep && i < 8; i++)
        r.keep[r.nkeep++] = spec->keep[i];
    if (spec->guard && spec->guard->fd >= 0) { /* started ahead: ours */
        r.guard_fd = spec->guard->fd;
        r.keep[0] = spec->guard->pid;
        spec->guard->fd = -1;
    }
    if ((r.w = calloc(r.n, sizeof(*r.w))) == NULL || setup_signals(&r) != 0 ||
        (r.guard_fd < 0 &&
         (r.guard_fd = guard_start(spec->kill_grace, &r.keep[0])) < 0)) {
        fprintf(stderr, "hvdrun: cannot set up the job: %s\n", strerror(errno));
        release(&r);
        return HVD_EXIT_LAUNCH;
    }
    for (int i = 0; i < r.n; i++) {
        r.w[i].sp = (spawned){0, -1, -1, -1};
        out_stream_init(&r.w[i].streams[0], rank_of(&r, i), 0, 0, -1);
        out_stream_init(&r.w[i].streams[1], rank_of(&r, i), 1, 0, -1);
    }
    r.start_deadline = hvd_mono_now() + spec->start_timeout;
    if (start_workers(&r) != 0) {
        r.start_failed = 1;
        begin_stop(&r);
    }
    loop(&r);
    /* every worker is reaped (or the loop gave up and killed them), and
     * with it its group out of the guard's list: the guard, told now,
     * exits while the leftovers are looked for (on a Slurm node the
     * task's end waits for it) */
    close_fd(&r.guard_fd);
    stop_leftovers(&r);
    code = exit_code(&r);
    if (spec->interrupted)
        *spec->interrupted = r.interrupted;
    release(&r);
    return code;
}
