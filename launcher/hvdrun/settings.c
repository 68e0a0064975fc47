#include "settings.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "discovery.h"
#include "hvd_exit.h"
#include "hostfile.h"
#include "slurm_alloc.h"

static int
usage_error(const char *msg)
{
    fprintf(stderr, "hvdrun: %s\ntry 'hvdrun --help'\n", msg);
    return HVD_EXIT_USAGE;
}

/* The config file under the command line. */
static int
load_config_file(settings *s)
{
    const char *path = cfg_values_get(&s->values, CFG_OPT_CONFIG_FILE);
    cfg_values file;
    cfg_err e;
    int r = 0;

    if (path == NULL)
        return 0;
    cfg_values_init(&file);
    if (cfg_configfile_load(path, &file, &e) != 0 ||
        cfg_values_merge(&s->values, &file, &e) != 0) {
        fprintf(stderr, "hvdrun: %s\n", e.msg);
        r = HVD_EXIT_CONFIG;
    }
    cfg_values_release(&file);
    return r;
}

/* --launcher, or what the environment implies: srun inside a Slurm
 * allocation (as mpiexec.hydra and OpenMPI's mpirun do), else SSH. */
static int
choose_launcher(settings *s, const cfg_slurm_env *slurm)
{
    const char *want = cfg_values_get(&s->values, CFG_OPT_LAUNCHER);

    if (want == NULL)
        s->launcher =
            cfg_slurm_in_allocation(slurm) ? LAUNCH_SLURM : LAUNCH_SSH;
    else if (strcmp(want, "slurm") == 0)
        s->launcher = LAUNCH_SLURM;
    else
        s->launcher = strcmp(want, "local") == 0 ? LAUNCH_LOCAL : LAUNCH_SSH;
    if (s->launcher == LAUNCH_SLURM && !cfg_slurm_in_allocation(slurm))
        return usage_error("--launcher slurm: not inside a Slurm allocation "
                           "(SLURM_NODELIST, SLURM_NNODES and "
                           "SLURM_TASKS_PER_NODE are not all set); run it "
                           "under salloc or sbatch");
    return 0;
}

static const char *
get_env(const char *name)
{
    return getenv(name);
}

/* -H or a host file inside an allocation, no --launcher: srun when every
 * host is a node of the allocation by its Slurm name, else SSH (hosts
 * outside it, "localhost" or an address, are not srun's to reach). */
static void
check_auto_slurm(settings *s, const cfg_slurm_env *slurm)
{
    cfg_hostlist nodes;
    size_t i, k;
    int usable;

    if (cfg_values_get(&s->values, CFG_OPT_LAUNCHER) != NULL ||
        s->launcher != LAUNCH_SLURM)
        return;
    cfg_hostlist_init(&nodes);
    usable = cfg_slurm_hosts(slurm, &nodes, NULL) == 0;
    for (i = 0; i < s->hosts.count; i++) {
        for (k = 0; usable && k < nodes.count; k++)
            if (strcmp(nodes.hosts[k].name, s->hosts.hosts[i].name) == 0)
                break;
        if (!usable || k == nodes.count) {
            s->launcher = LAUNCH_SSH;
            break;
        }
    }
    cfg_hostlist_release(&nodes);
}

/* No -H and no host file: the allocation's nodes and tasks, under srun. */
static int
load_allocation(settings *s, const cfg_slurm_env *slurm)
{
    cfg_err e;

    if (cfg_slurm_hosts(slurm, &s->hosts, &e) != 0) {
        fprintf(stderr, "hvdrun: the Slurm allocation: %s\n", e.msg);
        return HVD_EXIT_CONFIG;
    }
    s->from_allocation = 1;
    return 0;
}

/* --host-discovery-script: its first run gives the hosts; a failure
 * there fails the job (horovodrun's rule; later runs are retried). */
static int
load_discovered(settings *s)
{
    const char *cmd = cfg_values_get(&s->values, CFG_OPT_HOST_DISCOVERY_SCRIPT);
    int slots = (int)cfg_values_long(&s->values, CFG_OPT_SLOTS_PER_HOST, 1);
    long np = cfg_values_long(&s->values, CFG_OPT_NP, 0);
    char err[700];

    if (discovery_run(cmd, slots, DISCOVERY_TIMEOUT, &s->hosts, err,
                      sizeof(err)) != 0) {
        fprintf(stderr, "hvdrun: --host-discovery-script '%.200s': %s\n", cmd,
                err);
        return HVD_EXIT_CONFIG;
    }
    if (s->hosts.count == 0) {
        fprintf(stderr,
                "hvdrun: --host-discovery-script '%.200s' found no "
                "hosts\n",
                cmd);
        return HVD_EXIT_CONFIG;
    }
    if (np > cfg_hostlist_slots(&s->hosts)) {
        fprintf(stderr,
                "hvdrun: --host-discovery-script '%.200s' found %ld slots on "
                "%zu hosts, fewer than -np %ld\n",
                cmd, cfg_hostlist_slots(&s->hosts), s->hosts.count,
                np > 0 ? np : 1);
        return HVD_EXIT_CONFIG;
    }
    return 0;
}

static int
load_hosts(settings *s)
{
    const char *spec = cfg_values_get(&s->values, CFG_OPT_HOSTS);
    const char *file = cfg_values_get(&s->values, CFG_OPT_HOSTFILE);
    long np = cfg_values_long(&s->values, CFG_OPT_NP, 0);
    char msg[700];
    cfg_err e;
    int r;

    if (spec && file)
        return usage_error("give hosts with -H or --hostfile, not both");
    if (cfg_values_get(&s->values, CFG_OPT_HOST_DISCOVERY_SCRIPT))
        return spec || file ? usage_error("give hosts with -H, --hostfile or "
                                          "--host-discovery-script, not two")
                            : load_discovered(s);
    cfg_slurm_env_read(&s->slurm, get_env);
    if ((r = choose_launcher(s, &s->slurm)) != 0)
        return r;
    if (spec) {
        if (cfg_hostspec_parse(spec, &s->hosts, &e) == 0)
            return check_auto_slurm(s, &s->slurm), 0;
        /* (e names the entry: a long spec is cut, not the reason) */
        snprintf(msg, sizeof(msg), "bad -H '%.80s%s': %s", spec,
                 strlen(spec) > 80 ? "..." : "", e.msg);
        return usage_error(msg);
    }
    if (file) {
        if (cfg_hostfile_load(file, &s->hosts, &e) == 0)
            return check_auto_slurm(s, &s->slurm), 0;
        fprintf(stderr, "hvdrun: bad host file: %s\n", e.msg);
        return HVD_EXIT_CONFIG;
    }
    if (s->launcher == LAUNCH_SLURM)
        return load_allocation(s, &s->slurm);
    if (np <= 0)
        return usage_error("give -np N, or hosts with -H or --hostfile");
    snprintf(msg, sizeof(msg), "localhost:%ld", np);
    return cfg_hostspec_parse(msg, &s->hosts, &e) ? HVD_EXIT_USAGE : 0;
}

static int
build_plan(settings *s)
{
    long np = cfg_values_long(&s->values, CFG_OPT_NP, 0);
    cfg_err e;

    if (cfg_plan_build(&s->hosts, (int)np, &s->plan, &e) != 0)
        return usage_error(e.msg);
    if (s->plan.scale > 1)
        fprintf(stderr,
                "hvdrun: warning: -np %ld is more than the %ld slots given; "
                "running up to %d times each host's slots\n",
                np, cfg_hostlist_slots(&s->hosts), s->plan.scale);
    return 0;
}

/* --min-np and --max-np against the plan: min <= size <= max. */
static int
check_elastic(settings *s)
{
    long min = cfg_values_long(&s->values, CFG_OPT_MIN_NP, 0);
    long max = cfg_values_long(&s->values, CFG_OPT_MAX_NP, 0);
    char msg[200];

    if (min > s->plan.size) {
        snprintf(msg, sizeof(msg),
                 "--min-np %ld is more than the %d ranks the job starts with",
                 min, s->plan.size);
        return usage_error(msg);
    }
    if (max > 0 && max < s->plan.size) {
        snprintf(msg, sizeof(msg),
                 "--max-np %ld is less than the %d ranks the job starts with",
                 max, s->plan.size);
        return usage_error(msg);
    }
    return 0;
}

int
settings_whole_allocation(const settings *s)
{
    /* (inside a step the allocation is the step's, but srun takes its
     * nodes from the job's: it is told which) */
    return s->from_allocation && !s->slurm.in_step &&
           (size_t)s->plan.nhosts == s->hosts.count;
}

int
settings_elastic(const settings *s)
{
    return cfg_values_get(&s->values, CFG_OPT_MIN_NP) != NULL ||
           cfg_values_get(&s->values, CFG_OPT_MAX_NP) != NULL ||
           cfg_values_get(&s->values, CFG_OPT_HOST_DISCOVERY_SCRIPT) != NULL;
}

int
settings_load(int argc, char **argv, settings *s, int *done)
{
    char err[700];
    int cmd = argc, r;

    memset(s, 0, sizeof(*s));
    cfg_values_init(&s->values);
    cfg_hostlist_init(&s->hosts);
    *done = 0;
    if (cli_parse(argc, argv, &s->values, &cmd, err, sizeof(err)) != 0)
        return usage_error(err);
    if (cfg_values_flag(&s->values, CFG_OPT_HELP)) {
        cli_help(stdout);
        return *done = 1, 0;
    }
    if (cfg_values_flag(&s->values, CFG_OPT_VERSION)) {
        printf("hvdrun %s\n", HVD_VERSION);
        return *done = 1, 0;
    }
    s->command = argv + cmd;
    s->ncommand = argc - cmd;
    if ((r = load_config_file(s)) != 0 || (r = load_hosts(s)) != 0 ||
        (r = build_plan(s)) != 0)
        return r;
    return check_elastic(s);
}

void
settings_release(settings *s)
{
    cfg_values_release(&s->values);
    cfg_hostlist_release(&s->hosts);
    cfg_plan_release(&s->plan);
}
