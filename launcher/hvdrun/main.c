/* hvdrun: runs a command as an N-process data-parallel job. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hvd_exit.h"
#include "local_host.h"
#include "worker_group.h"
#include "fleet.h"
#include "hvdd_chan.h"
#include "summary.h"
#include "hvdd_token.h"
#include "rendezvous.h"
#include "settings.h"
#include "sibling.h"
#include "srun_args.h"
#include "srun_step.h"
#include "worker_env.h"

extern char **environ;

static void
print_plan(const settings *s, FILE *f)
{
    fprintf(f, "%-6s %-24s %-10s %-10s %-10s %-10s\n", "rank", "host",
            "local_rank", "cross_rank", "local_size", "cross_size");
    for (int i = 0; i < s->plan.size; i++) {
        const cfg_slot *x = &s->plan.slots[i];
        fprintf(f, "%-6d %-24s %-10d %-10d %-10d %-10d\n", x->rank,
                s->hosts.hosts[x->host].name, x->local_rank, x->cross_rank,
                x->local_size, x->cross_size);
    }
}

/* Runs a program that lives beside this one: `hvdrun --agent` is
 * hvdrun-agent, and jobs that reach other hosts over SSH run in
 * hvdrun-ssh, this program linked with libssh2 (whose loading would cost
 * every local job's start about a millisecond). Returns only on failure. */
static int
exec_sibling(const char *name, char **argv)
{
    char path[4200];

    if (sibling_path(name, path, sizeof(path)) != 0) {
        fprintf(stderr, "hvdrun: cannot find '%s' beside hvdrun\n", name);
        return HVD_EXIT_LAUNCH;
    }
    argv[0] = path;
    execv(path, argv);
    fprintf(stderr, "hvdrun: cannot run '%s': %s\n", path, strerror(errno));
    return HVD_EXIT_NOTFOUND;
}

/* The variables hvdrun sets, i.e. every entry of env not inherited as is. */
static void
print_env(envlist *env, FILE *f)
{
    int left = 0;

    for (size_t i = 0; i < env->n; i++) {
        const char *e = env->v[i], *eq = strchr(e, '=');
        char name[256];
        const char *had;
        snprintf(name, sizeof(name), "%.*s", (int)(eq - e), e);
        had = getenv(name);
        if (had == NULL || strcmp(had, eq + 1) != 0)
            fprintf(f, "%s\n", e);
    }
    /* what of the launcher's own it does not get */
    for (char **v = environ; *v; v++) {
        size_t n = strcspn(*v, "=");
        char name[256];
        if (n >= sizeof(name) || (*v)[n] != '=')
            continue;
        memcpy(name, *v, n);
        name[n] = '\0';
        if (envlist_get(env, name) == NULL)
            fprintf(f, "%s%s", left++ ? " " : "\nnot passed on: ", name);
    }
    if (left)
        fputc('\n', f);
}

static int
all_hosts_local(const settings *s)
{
    for (int h = 0; h < s->plan.nhosts; h++)
        if (!host_is_local(s->hosts.hosts[h].name))
            return 0;
    return 1;
}

/* hvdrun runs the job's workers itself, with no agent: every host is
 * this one, and the job is not elastic (an elastic job runs an agent per
 * host, this one's too: a host's workers come and go with it). */
static int
runs_here_alone(const settings *s)
{
    return all_hosts_local(s) && !settings_elastic(s);
}

/* This host only (under one name or several): loopback, unless
 * --network-interface names another interface of it (by name or address
 * range). Other hosts: hvdd decides once the agents have probed each
 * other. */
static int
choose_network(const settings *s, worker_net *net, char *ifname, size_t ifsize,
               char *maddr, size_t masize)
{
    const char *wanted = cfg_values_get(&s->values, CFG_OPT_NETWORK_INTERFACE);

    if (wanted == NULL || !all_hosts_local(s))
        return 0;
    if (local_interface(wanted, ifname, ifsize, maddr, masize) != 0) {
        fprintf(stderr,
                "hvdrun: --network-interface '%s': no interface that is up "
                "on this host matches\ntry 'ip -brief address'\n",
                wanted);
        return HVD_EXIT_USAGE;
    }
    net->iface = ifname;
    net->master_addr = maddr;
    return 0;
}

/* --launcher local names this host only. */
static int
check_launcher(const settings *s)
{
    for (int h = 0; s->launcher == LAUNCH_LOCAL && h < s->plan.nhosts; h++)
        if (!host_is_local(s->hosts.hosts[h].name)) {
            fprintf(stderr,
                    "hvdrun: --launcher local runs on this host only, not "
                    "on '%s'\ntry 'hvdrun --help'\n",
                    s->hosts.hosts[h].name);
            return HVD_EXIT_USAGE;
        }
    return 0;
}

/* srun -n 3 hvdrun ...: srun started hvdrun as several tasks, and each
 * copy would run the whole job (three jobs of three ranks). Refused when
 * the hosts are the allocation's, or when the job would start an srun
 * step (-H naming nodes: a copy per node running a job on its own node
 * alone, -H $SLURMD_NODENAME:4, is a job per node, and runs). Task 0
 * says so, once; every copy exits 64. The other tasks of srun --pty's
 * step (whose output goes nowhere) end 0 at once, so that srun's code is
 * task 0's job's. */
static int
refuse_copies(const settings *s, int *done)
{
    long copies = cfg_slurm_step_copies(&s->slurm);
    int own_step = s->launcher == LAUNCH_SLURM && !runs_here_alone(s);

    if (copies == 0 || (!s->from_allocation && !own_step))
        return 0;
    if (s->slurm.pty_port) /* (task 0 of it is no copy) */
        return *done = 1, 0;
    if (strcmp(s->slurm.procid, "0") == 0) /* (a copy has one) */
        fprintf(stderr,
                "hvdrun: srun started %ld copies of hvdrun (a step of %ld "
                "tasks), each of which would run the whole job: run hvdrun "
                "once (from the batch script, salloc's shell or srun -n 1); "
                "it starts every rank itself\n",
                copies, copies);
    return HVD_EXIT_USAGE;
}

/* How the agents would start, for --dry-run: HVD_EXIT_OK, or
 * HVD_EXIT_LAUNCH where the job could not start them (said on stderr). */
static int
print_launch(const settings *s, FILE *f)
{
    char *nodes[s->plan.nhosts > 0 ? s->plan.nhosts : 1], line[8192],
        gres[SRUN_GRES_MAX] = "";
    const char *remote = cfg_values_get(&s->values, CFG_OPT_REMOTE_HVDRUN);
    srun_step_spec spec = {
        .nodes = nodes,
        .n = (size_t)s->plan.nhosts,
        .whole_allocation = settings_whole_allocation(s),
        .hvdrun = remote ? remote : "hvdrun",
        .agent = remote ? NULL : "hvdrun-srun-agent",
        .gres = gres,
    };

    if (runs_here_alone(s))
        return HVD_EXIT_OK;
    if (s->launcher != LAUNCH_SLURM) {
        fprintf(f, "\nagents: over SSH, one per host\n");
        return HVD_EXIT_OK;
    }
    for (int i = 0; i < s->plan.nhosts; i++)
        nodes[i] = s->hosts.hosts[i].name;
    if (srun_gres_arg(nodes, spec.n, gres, sizeof(gres), line, sizeof(line))) {
        fflush(f);
        fprintf(stderr, "hvdrun: %s\n", line);
        return HVD_EXIT_LAUNCH;
    }
    srun_step_describe(&spec, line, sizeof(line));
    fprintf(f, "\nagents: one srun step%s: %s\n",
            s->from_allocation ? ", hosts from the Slurm allocation" : "",
            line);
    return HVD_EXIT_OK;
}

static int
dry_run(settings *s, const envlist *base, const worker_net *net)
{
    long rank = cfg_values_long(&s->values, CFG_OPT_DRY_RUN_RANK, 0);
    envlist env = {0};

    if (rank >= s->plan.size) {
        fprintf(stderr,
                "hvdrun: --dry-run-rank %ld: the job has ranks 0 to "
                "%d\ntry 'hvdrun --help'\n",
                rank, s->plan.size - 1);
        return HVD_EXIT_USAGE;
    }
    print_plan(s, stdout);
    if (print_launch(s, stdout) != HVD_EXIT_OK)
        return HVD_EXIT_LAUNCH;
    if (worker_env_rank(&env, base, &s->plan, &s->hosts, (int)rank, net))
        return HVD_EXIT_LAUNCH;
    printf("\nenvironment of rank %ld (besides the launcher's own):\n", rank);
    print_env(&env, stdout);
    if (s->launcher == LAUNCH_SLURM && !runs_here_alone(s)) {
        char names[1024];
        worker_env_node_describe(names, sizeof(names));
        printf("\neach node's own, from its agent's step (unless -x sets "
               "them): %s\n",
               names);
    }
    envlist_release(&env);
    return HVD_EXIT_OK;
}

static int
start_rendezvous(settings *s, rendezvous *rv, worker_net *net, int channel)
{
    rendezvous_opts o = {
        .listen_addr = cfg_values_get(&s->values, CFG_OPT_RENDEZVOUS_ADDR),
        .listen_port =
            (int)cfg_values_long(&s->values, CFG_OPT_RENDEZVOUS_PORT, 0),
        .heartbeat_timeout =
            cfg_values_double(&s->values, CFG_OPT_HEARTBEAT_TIMEOUT, 0),
        .iface = net->iface,
        .master_addr = net->master_addr,
        .master_port = net->master_port,
        .network_interface =
            cfg_values_get(&s->values, CFG_OPT_NETWORK_INTERFACE),
        .channel = channel,
        .verbose = cfg_values_flag(&s->values, CFG_OPT_VERBOSE),
    };
    char err[600];

    if (rendezvous_start(rv, &s->hosts, &s->plan, &o, err, sizeof(err))) {
        fprintf(stderr, "hvdrun: %s\n", err);
        return HVD_EXIT_RENDEZVOUS;
    }
    net->rendezvous_addr = rv->addr;
    net->rendezvous_port = rv->port;
    net->token = rv->token;
    /* (on stderr, never in argv: the URL carries the token, in the
     * fragment, which the browser does not send) */
    /* --verbose into a file or a pipe (a log others may read): the port
     * only */
    int url = cfg_values_flag(&s->values, CFG_OPT_STATUS_URL) ||
              (o.verbose && isatty(STDERR_FILENO));
    if (o.verbose && !url)
        fprintf(stderr,
                "hvdrun: job page: port %d (--status-url prints its URL, "
                "which holds the job's token)\n",
                rv->port);
    if (url)
        fprintf(stderr, "hvdrun: job page: http://%s:%d/job#token=%s\n",
                o.listen_addr && strcmp(o.listen_addr, "0.0.0.0") != 0 &&
                        strchr(o.listen_addr, ':') == NULL
                    ? o.listen_addr
                    : "127.0.0.1",
                rv->port, rv->token);
    /* three beats per timeout: one late packet is not a death */
    net->heartbeat = o.heartbeat_timeout / 3;
    if (o.verbose && all_hosts_local(s))
        fprintf(stderr, "hvdrun: network: interface %s, MASTER_ADDR %s:%d\n",
                net->iface, net->master_addr, net->master_port);
    else if (o.verbose)
        fprintf(stderr, "hvdrun: network: chosen with the hosts' agents\n");
    return 0;
}

/* One srun step for every node of the plan (the allocation's own node
 * list when the plan takes all of it), authenticated with secret. NULL
 * after saying why on stderr. */
static srun_step *
start_step(const settings *s, const char *secret)
{
    int n = s->plan.nhosts;
    char *nodes[n > 0 ? n : 1], err[700], agent[PATH_MAX + 32],
        gres[SRUN_GRES_MAX] = "";
    const char *remote = cfg_values_get(&s->values, CFG_OPT_REMOTE_HVDRUN);
    sigset_t now;
    /* the nodes run hvdrun-srun-agent itself, not `hvdrun --agent-srun`:
     * one program start less on every node (under Slurm a job's nodes
     * often start on shared CPUs) */
    srun_step_spec spec = {
        .nodes = nodes,
        .n = (size_t)n,
        .whole_allocation = settings_whole_allocation(s),
        .hvdrun = remote,
        .agent = remote ? NULL : agent,
        .gres = gres,
        .secret = secret,
        .unblock = &now,
    };
    srun_step *st;

    if (!remote && (sibling_path("hvdrun-srun-agent", agent, sizeof(agent)) ||
                    access(agent, X_OK) != 0)) {
        fprintf(stderr, "hvdrun: cannot find 'hvdrun-srun-agent' beside "
                        "hvdrun: hvdrun is not installed whole\n");
        return NULL;
    }
    sigprocmask(SIG_SETMASK, NULL, &now);
    for (int i = 0; i < n; i++)
        nodes[i] = s->hosts.hosts[i].name;
    if (srun_gres_arg(nodes, spec.n, gres, sizeof(gres), err, sizeof(err))) {
        fprintf(stderr, "hvdrun: %s\n", err);
        return NULL;
    }
    if ((st = srun_step_start(&spec, err, sizeof(err))) == NULL)
        fprintf(stderr, "hvdrun: %s\n", err);
    return st;
}

/* The fleet is done with hvdd: it stops while the rest ends (Slurm's step
 * takes 10 ms more; hvdd's exit took 2-4 ms after it). */
static void
hvdd_done(void *arg)
{
    rendezvous_let_go(arg);
}

/* Hosts other than this one: an agent on each (over SSH, or from one
 * srun step), hvdd for all. */
static int
run_fleet(settings *s, const envlist *base, worker_net *net, int *interrupted)
{
    rendezvous rv;
    fleet_spec spec = {.s = s, .base = base, .interrupted = interrupted};
    int verbose = cfg_values_flag(&s->values, CFG_OPT_VERBOSE);
    char secret[80];
    int code;

#ifdef HVD_WITH_SSH
    spec.ssh = &fleet_ssh_libssh2;
#endif
    net->iface = "lo"; /* hvdd's answer if the plan has one host */
    net->master_addr = "127.0.0.1";
    /* srun's step starts while hvdd does (its own secret: the token is
     * hvdd's to make) */
    if (s->launcher == LAUNCH_SLURM &&
        (hvdd_token_new(secret) != 0 ||
         (spec.step = start_step(s, secret)) == NULL))
        return HVD_EXIT_LAUNCH;
    /* the fleet talks to hvdd over the channel (hvdd_chan.h) */
    if ((code = start_rendezvous(s, &rv, net, 1)) != 0) {
        srun_step_free(spec.step);
        return code;
    }
    if ((spec.chan = hvdd_chan_new(rv.channel_fd)) == NULL) {
        fprintf(stderr, "hvdrun: out of memory\n");
        srun_step_free(spec.step);
        rv.channel_fd = -1;
        rendezvous_stop(&rv);
        return HVD_EXIT_LAUNCH;
    }
    rv.channel_fd = -1; /* the channel's now */
    spec.token = rv.token;
    spec.rendezvous_port = rv.port;
    spec.rendezvous_addr = cfg_values_get(&s->values, CFG_OPT_RENDEZVOUS_ADDR);
    spec.heartbeat = net->heartbeat;
    spec.events_fd = rv.events_fd;
    if (!verbose) { /* (verbose: hvdd's summary comes at every end) */
        spec.hvdd_done = hvdd_done;
        spec.arg = &rv;
    }
    code = fleet_run(&spec); /* it frees the step */
    /* the end as hvdd saw it, when it went wrong (or on request) */
    if (code != 0 || verbose)
        hvdrun_summary_print(spec.chan);
    hvdd_chan_free(spec.chan);
    rendezvous_stop(&rv);
    return code;
}

/* Hosts other than this one. A Slurm job's fleet runs here: srun starts
 * every agent, so nothing of SSH is needed, and hvdrun links neither
 * libssh2 nor OpenSSL (an exec of hvdrun-ssh and its loading cost every
 * Slurm job 2 ms of CPU while Slurm started the step on the same CPUs).
 * Over SSH, hvdrun-ssh runs the job. */
static int
run_remote(settings *s, const envlist *base, worker_net *net, char **argv,
           int *interrupted)
{
#ifndef HVD_WITH_SSH
    if (s->launcher != LAUNCH_SLURM) {
        int code = exec_sibling("hvdrun-ssh", argv);
        /* an installation without hvdrun-ssh: no restart would find it */
        exit(code);
    }
#endif
    (void)argv;
    return run_fleet(s, base, net, interrupted);
}

static int
run(settings *s, const envlist *base, worker_net *net, int *interrupted)
{
    rendezvous rv;
    envlist *envs = calloc(s->plan.size, sizeof(*envs));
    char **envp[s->plan.size > 0 ? s->plan.size : 1];
    worker_group_spec spec = {
        .argv = s->command,
        .envp = (char *const *const *)envp,
        .plan = &s->plan,
        .hosts = &s->hosts,
        .kill_grace = cfg_values_double(&s->values, CFG_OPT_KILL_GRACE, 3),
        .start_timeout =
            cfg_values_double(&s->values, CFG_OPT_START_TIMEOUT, 30),
        .output_dir = cfg_values_get(&s->values, CFG_OPT_OUTPUT_FILENAME),
        .timestamps = cfg_values_flag(&s->values, CFG_OPT_PREFIX_TIMESTAMP),
        .verbose = cfg_values_flag(&s->values, CFG_OPT_VERBOSE),
        .interrupted = interrupted,
    };
    int code = HVD_EXIT_LAUNCH, i;

    if (envs == NULL || (code = start_rendezvous(s, &rv, net, 0)) != 0) {
        free(envs);
        return envs ? code : HVD_EXIT_LAUNCH;
    }
    spec.events_fd = rv.events_fd;
    spec.keep = &rv.pid; /* hvdd is not one of the job's workers */
    spec.nkeep = 1;
    code = HVD_EXIT_LAUNCH;
    for (i = 0; envs && i < s->plan.size; i++) {
        if (worker_env_rank(&envs[i], base, &s->plan, &s->hosts, i, net))
            break;
        envp[i] = envlist_array(&envs[i]);
    }
    if (envs && i == s->plan.size)
        code = worker_group_run(&spec);
    else
        fprintf(stderr, "hvdrun: out of memory\n");
    for (i = 0; envs && i < s->plan.size; i++)
        envlist_release(&envs[i]);
    free(envs);
    rendezvous_stop(&rv);
    return code;
}

/* Whether a job that ended with code should start again: not after a
 * signal to hvdrun, nor when it was given something it cannot run. */
static int
worth_restarting(int code, int interrupted)
{
    return code != HVD_EXIT_OK && code != HVD_EXIT_USAGE &&
           code != HVD_EXIT_CONFIG && !interrupted;
}

/* The job, then, as torchrun's --max-restarts, the whole job again
 * (every host, a new hvdd) after each failure, up to N times, the
 * workers told which start this is. */
static int
run_attempts(settings *s, envlist *base, worker_net *net, char **argv)
{
    long most = cfg_values_long(&s->values, CFG_OPT_MAX_RESTARTS, -1);
    int code = HVD_EXIT_OK, interrupted = 0, local = runs_here_alone(s);
    char count[24];

    if (settings_elastic(s) && envlist_set(base, "HOROVOD_ELASTIC", "1") != 0)
        return HVD_EXIT_LAUNCH;
    /* (an agent's workers get their node's own: worker_env_node there) */
    if (local) {
        char **chosen = worker_env_chosen(&s->values);
        int r = chosen ? worker_env_node(base, chosen) : -1;
        free(chosen);
        if (r != 0)
            return HVD_EXIT_LAUNCH;
    }
    for (long k = 0; k <= (most < 0 ? 0 : most); k++) {
        if (most >= 0) {
            snprintf(count, sizeof(count), "%ld", most);
            if (envlist_set(base, "TORCHELASTIC_MAX_RESTARTS", count) != 0)
                return HVD_EXIT_LAUNCH;
            snprintf(count, sizeof(count), "%ld", k);
            if (envlist_set(base, "TORCHELASTIC_RESTART_COUNT", count) != 0)
                return HVD_EXIT_LAUNCH;
        }
        if (k > 0) {
            fprintf(stderr,
                    "hvdrun: job failed (exit %d); starting it again "
                    "(restart %ld of %ld)\n",
                    code, k, most);
            if (local) /* the last start's port may still be held */
                net->master_port = free_local_port();
        }
        code = local ? run(s, base, net, &interrupted)
                     : run_remote(s, base, net, argv, &interrupted);
        if (!worth_restarting(code, interrupted))
            break;
    }
    if (most > 0 && worth_restarting(code, interrupted))
        fprintf(stderr, "hvdrun: job failed (exit %d) after %ld restarts\n",
                code, most);
    return code;
}

int
main(int argc, char **argv)
{
    settings s;
    envlist base = {0};
    const char *missing;
    worker_net net = {"127.0.0.1", 0, "lo", NULL, 0, NULL, 0};
    char ifname[64], maddr[64];
    int done, code;

    if (argc > 1 && strcmp(argv[1], "--agent") == 0)
        return exec_sibling("hvdrun-agent", argv + 1);
    if (argc > 1 && strcmp(argv[1], "--agent-srun") == 0)
        return exec_sibling("hvdrun-srun-agent", argv + 1);
    if ((code = settings_load(argc, argv, &s, &done)) != 0 || done)
        goto out;
    if ((code = check_launcher(&s)) != 0 ||
        (code = refuse_copies(&s, &done)) != 0 || done)
        goto out;
    if (cfg_values_flag(&s.values, CFG_OPT_CHECK_SSH)) {
#ifdef HVD_WITH_SSH
        fleet_spec check = {.s = &s,
                            .events_fd = -1,
                            .check_only = 1,
                            .ssh = &fleet_ssh_libssh2};
        code = fleet_run(&check);
#else
        code = exec_sibling("hvdrun-ssh", argv);
#endif
        goto out;
    }
    if (s.ncommand == 0 && !cfg_values_flag(&s.values, CFG_OPT_DRY_RUN)) {
        fprintf(stderr, "hvdrun: no command given\ntry 'hvdrun --help'\n");
        code = HVD_EXIT_USAGE;
        goto out;
    }
    if (worker_env_base(&base, environ, &s.values, &missing) != 0) {
        code = HVD_EXIT_LAUNCH;
        goto out;
    }
    if (missing)
        fprintf(stderr,
                "hvdrun: warning: -x %s: not set here, not "
                "forwarded\n",
                missing);
    net.master_port = free_local_port();
    if ((code = choose_network(&s, &net, ifname, sizeof(ifname), maddr,
                               sizeof(maddr))) != 0)
        goto out;
    if (!all_hosts_local(&s)) { /* only a dry run gets this far */
        net.master_addr = s.hosts.hosts[0].name;
        net.iface = "(chosen when the job starts)";
    }
    if (cfg_values_flag(&s.values, CFG_OPT_VERBOSE))
        print_plan(&s, stderr);
    if (cfg_values_flag(&s.values, CFG_OPT_DRY_RUN))
        code = dry_run(&s, &base, &net);
    else
        code = run_attempts(&s, &base, &net, argv);
out:
    envlist_release(&base);
    settings_release(&s);
    fflush(stdout);
    return code;
}
