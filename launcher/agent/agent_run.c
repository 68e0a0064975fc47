/* The agent (agent_run.h): runs one host's share of a job for the
 * launcher (over SSH, directly for the launch host's own slots, or on a
 * node of an srun step). The job comes on
 * stdin (hvdrun_brief.h); EOF there means the launcher is gone, and the
 * workers are stopped. Its calls to hvdd go through the launcher
 * (agent_relay.h). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent_beat.h"
#include "agent_brief.h"
#include "agent_nic.h"
#include "agent_relay.h"
#include "guard.h"
#include "agent_run.h"
#include "hvd_exit.h"
#include "output.h"
#include "worker_group.h"
#include "quiet_thread.h"
#include "worker_env.h"

#define MAX_JOB_LINE (64 << 20)

/* Reads stdin up to the end of the next line, without reading past it
 * more than the caller's buffer holds. Returns the line (malloc'd, no
 * newline) or NULL at EOF. */
static char *
read_line(char **buf, size_t *len)
{
    size_t cap = *len + 65536;
    char *nl;

    for (;;) {
        if ((nl = *buf ? memchr(*buf, '\n', *len) : NULL) != NULL) {
            size_t n = (size_t)(nl - *buf);
            char *line = strndup(*buf, n);
            memmove(*buf, nl + 1, *len - n - 1);
            *len -= n + 1;
            return line;
        }
        if (*len >= MAX_JOB_LINE)
            return NULL;
        char *grown = realloc(*buf, cap);
        if (grown == NULL)
            return NULL;
        *buf = grown;
        ssize_t r = read(STDIN_FILENO, *buf + *len, cap - *len);
        if (r <= 0 && !(r < 0 && errno == EINTR))
            return NULL;
        *len += r > 0 ? (size_t)r : 0;
        cap = *len + 65536;
    }
}

/* One control line to the launcher: HVDRUN_CONTROL, then the text. */
static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void
say(const char *fmt, ...)
{
    char line[1200];
    size_t pre = strlen(HVDRUN_CONTROL), room = sizeof(line) - pre - 1;
    va_list ap;
    int n;

    memcpy(line, HVDRUN_CONTROL, pre);
    va_start(ap, fmt);
    n = vsnprintf(line + pre, room, fmt, ap);
    va_end(ap);
    if (n < 0)
        n = 0;
    if ((size_t)n >= room) /* cut: the line still ends */
        n = (int)room - 1;
    n += (int)pre;
    line[n++] = '\n';
    if (out_write(STDOUT_FILENO, line, (size_t)n) != 0)
        exit(HVD_EXIT_LAUNCH); /* the launcher is gone */
}

/* Each worker's end goes to hvdd, so that its view of the job (GET
 * /v1/status, the launcher's summary) covers every program, not only
 * those that register. A report waits for no answer: the agent's end
 * (and the job's) is not held up by hvdd's, and the launcher has every
 * report made before it reads the job's end from hvdd. */
typedef struct reporter {
    const char *host; /* this host's name in the plan */
    int said_failed;  /* the launcher heard of this host's first failure */
} reporter;

static void
report_end(void *arg, int rank, int pid, int status)
{
    reporter *rp = arg;
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);

    /* at once, not at the agent's end: this host's other ranks may take
     * the whole grace to stop, and the job's failure is the first one */
    if (code != 0 && !rp->said_failed) {
        rp->said_failed = 1;
        say("failed %d %d", rank, code);
    }
    agent_relay_tell("exit",
                     json_pack("{si si si ss}", "rank", rank, "code", code,
                               "pid", pid, "host", rp->host),
                     2000, 1);
}

static int
run_workers(hvdrun_brief *j, const agent_net *an, guard_started *guard)
{
    reporter rp = {.host = j->hosts.hosts[j->host].name};
    int first = cfg_plan_first_rank(&j->plan, j->host), n = 0, code, i;
    worker_net net = {an->master_addr,    an->master_port,    an->iface,
                      j->rendezvous_addr, j->rendezvous_port, j->token,
                      j->heartbeat};

    while (first + n < j->plan.size && j->plan.slots[first + n].host == j->host)
        n++;
    envlist *envs = calloc(n, sizeof(*envs));
    char **envp[n];
    worker_group_spec spec = {
        .argv = j->argv,
        .envp = (char *const *const *)envp,
        .plan = &j->plan,
        .hosts = &j->hosts,
        .kill_grace = j->kill_grace,
        .start_timeout = j->start_timeout,
        .output_dir = j->output_dir,
        .timestamps = j->timestamps,
        .verbose = j->verbose,
        .events_fd = STDIN_FILENO,
        .events_eof = "the launcher went away",
        .on_worker_end = report_end,
        .on_worker_end_arg = &rp,
        .first_rank = first,
        .nranks = n,
        .guard = guard,
    };

    for (i = 0; envs && i < n; i++) {
        if (worker_env_rank(&envs[i], &j->base, &j->plan, &j->hosts, first + i,
                            &net))
            break;
        envp[i] = envlist_array(&envs[i]);
    }
    code = envs && i == n ? worker_group_run(&spec) : HVD_EXIT_LAUNCH;
    for (i = 0; envs && i < n; i++)
        envlist_release(&envs[i]);
    free(envs);
    return code;
}

/* The network choice may wait on other hosts for a long time: it runs in a
 * thread while stdin is watched, so that an agent whose launcher is gone
 * (or gave up on another host) exits at once instead of at the timeout.
 * The thread says it is done through a pipe watched with stdin (a look
 * at a flag every 50 ms cost every start 25 ms on average). */
typedef struct choice {
    hvdd_client *c;
    const hvdrun_brief *j;
    agent_net *an;
    char err[1024];
    int r;
    int done[2];          /* the thread writes a byte to done[1] when it is */
    guard_started *guard; /* started while the choice waits on others */
} choice;

static void *
choose(void *arg)
{
    choice *ch = arg;

    ch->r = agent_nic_choose(ch->c, ch->j, ch->an, ch->err, sizeof(ch->err));
    while (write(ch->done[1], "d", 1) < 0 && errno == EINTR)
        ;
    return NULL;
}

/* stdin's bytes into *buf while the choice runs; exits at its end or an
 * "abort" (no worker runs yet). */
static void
watch_stdin(choice *ch, char **buf, size_t *len)
{
    for (;;) {
        struct pollfd p[2] = {{ch->done[0], POLLIN, 0},
                              {STDIN_FILENO, POLLIN, 0}};
        if (poll(p, 2, -1) < 0 && errno != EINTR)
            _exit(HVD_EXIT_LAUNCH);
        if (p[0].revents)
            return;
        if (p[1].revents) {
            char *grown = realloc(*buf, *len + 4096);
            ssize_t n = grown ? read(STDIN_FILENO, grown + *len, 4096) : -1;
            if (grown)
                *buf = grown;
            if (n <= 0 || memmem(*buf, *len + n, "abort", 5))
                _exit(HVD_EXIT_LAUNCH);
            *len += (size_t)n;
        }
    }
}

static int
choose_watching_stdin(choice *ch, char **buf, size_t *len)
{
    pthread_t t;

    if (pipe2(ch->done, O_CLOEXEC) != 0) {
        snprintf(ch->err, sizeof(ch->err), "pipe: %s", strerror(errno));
        return -1;
    }
    if (quiet_thread_start(&t, choose, ch) != 0) {
        close(ch->done[0]);
        close(ch->done[1]);
        return -1;
    }
    /* the workers' guard, forked while the choice waits on the other
     * hosts, not on the way from "go" to the workers (a failure here
     * leaves it to worker_group_run) */
    ch->guard->fd = guard_start(ch->j->kill_grace, &ch->guard->pid);
    watch_stdin(ch, buf, len);
    pthread_join(t, NULL);
    close(ch->done[0]);
    close(ch->done[1]);
    return ch->r;
}

static int
read_job(hvdrun_brief *j, char **buf, size_t *len)
{
    char *line = read_line(buf, len), err[1024];
    int r = line ? hvdrun_brief_decode(line, j, err, sizeof(err)) : -1;

    if (r != 0)
        say("error job: %s", line ? err : "no job on stdin");
    /* the launcher's Slurm variables of a node name its own */
    else if ((r = worker_env_node(&j->base, j->chosen)) != 0)
        say("error job: out of memory");
    free(line);
    return r;
}

/* "go ROUND HOSTS": this host joins a running elastic job in that
 * round; its workers' identities come from the round's hosts. */
static int
join_round(hvdrun_brief *j, const char *line, const char *host)
{
    char spec[8192], err[512];
    int round;

    if (sscanf(line, "go %d %8191s", &round, spec) != 2 || round < 1)
        return -1;
    if (hvdrun_brief_join_round(j, round, spec, err, sizeof(err)) != 0) {
        say("error %s: join: %s", host, err);
        return -1;
    }
    return 0;
}

/* Everything before the workers: the job's directory, the network, and
 * the launcher's "go". */
static int
prepare(hvdrun_brief *j, agent_net *an, char **buf, size_t *len,
        guard_started *guard)
{
    char *line, host[300];
    int r;

    snprintf(host, sizeof(host), "%s", j->hosts.hosts[j->host].name);
    if (chdir(j->cwd) != 0) {
        say("error %s: cwd: the working directory '%s' is missing here", host,
            j->cwd);
        return -1;
    }
    choice ch = {.j = j, .an = an, .err = "out of memory", .guard = guard};
    ch.c = hvdd_client_new(j->rendezvous_addr, j->rendezvous_port, j->token,
                           j->start_timeout > 0 ? j->start_timeout : 30);
    r = ch.c ? choose_watching_stdin(&ch, buf, len) : -1;
    hvdd_client_free(ch.c);
    if (r != 0) {
        say("error %s: network: %s", host, ch.err);
        return -1;
    }
    say("ready %s %s", an->iface, an->addr);
    line = read_line(buf, len);
    r = line && strcmp(line, "go") == 0 ? 0 : -1;
    if (line && r != 0) /* a host that joins: "go ROUND HOSTS" */
        r = join_round(j, line, host);
    free(line);
    return r;
}

int
agent_run(int argc, char **argv)
{
    hvdrun_brief j = {0};
    agent_net an;
    char *buf = NULL;
    size_t len = 0;
    int code = HVD_EXIT_LAUNCH;

    /* --check: hvdrun --check-ssh only wants to see the agent start */
    if (argc > 1 && strcmp(argv[1], "--check") == 0)
        return 0;
    /* hvdd's answers come on stdin, between the launcher's lines */
    if (agent_stdin_start() != 0) {
        say("error agent: cannot read stdin: %s", strerror(errno));
        return HVD_EXIT_LAUNCH;
    }
    if (read_job(&j, &buf, &len) == 0) {
        agent_beat beat;
        guard_started guard = {-1, 0};
        agent_beat_start(&beat, &j);
        if (prepare(&j, &an, &buf, &len, &guard) == 0)
            code = run_workers(&j, &an, &guard);
        guard_drop(&guard); /* (not taken: no worker started) */
        agent_beat_stop(&beat);
    }
    free(buf);
    hvdrun_brief_release(&j);
    return code;
}
